// Every message of the wire protocol (docs/design.md §5, docs/protocol.md),
// for code that speaks to more than one peer. Each peer's messages, with
// their type names next to their bodies, have a header of their own; include
// the one you need:
//
//   client_messages.hpp   client ↔ schedd (the sched CLI, monitoring tools)
//   agent_messages.hpp    node agent ↔ schedd
//   step_messages.hpp     a step's output and exits, agent → schedd → client
//   pmi_messages.hpp      an MPI step's PMI fence across its nodes, agent ↔ schedd
//   pmix_messages.hpp     MPI_Comm_spawn, publish/lookup and connect (PMIx), agent ↔ schedd
//   process_messages.hpp  a job's processes ↔ their node's agent
//   event_messages.hpp    the body of a PUB event
//   session.hpp           a client's session (session.open), its keys and MACs
#pragma once

#include "sched/proto/agent_messages.hpp"
#include "sched/proto/client_messages.hpp"
#include "sched/proto/event_messages.hpp"
#include "sched/proto/pmi_messages.hpp"
#include "sched/proto/pmix_messages.hpp"
#include "sched/proto/process_messages.hpp"
#include "sched/proto/session.hpp"
#include "sched/proto/step_messages.hpp"
