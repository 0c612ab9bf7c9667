"""What every conformance test of the negotiation client shares: starting a negotiation_peer
(the iHypervisor) per test, clients connected to it, and checks used by several scenarios.

The spec is docs/negotiation.md; nothing here comes from sched's C++ implementation.
"""
import functools
import os
import unittest

import nego_client as nc

# Set by test_conformance.py (--peer PATH) or from the environment.
PEER = os.environ.get("NEGOTIATION_PEER", "")
NODES = "n1:2x2,n2:2x2"  # 8 cores: 2 nodes of 2 sockets of 2 cores
ALL_CORES = {(n, c) for n in ("n1", "n2") for c in range(4)}


def as_set(mapping):
    """A mapping compared without regard to order."""
    return {(p["job"], p["node"], tuple(sorted(p["cores"]))) for p in mapping}


def cores_of(mapping):
    return [(p["node"], c) for p in mapping for c in p["cores"]]


def with_peer_log(cls):
    """Appends the peers' stderr to a failing test's message, so a failure explains itself."""

    def wrap(fn):
        @functools.wraps(fn)  # keeps unittest's marks (expectedFailure)
        def run(self):
            try:
                fn(self)
                for client in self.clients:
                    self.assertEqual(client.seq_violations, [],
                                     "§2: H's seq must increase by one per message it sends")
            except Exception as e:
                logs = "\n".join("--- %s\n%s" % (" ".join(p.args), p.log()) for p in self.peers)
                raise AssertionError("%s\n%s" % (e, logs)) from e

        return run

    for name in list(vars(cls)):
        if name.startswith("test_"):
            setattr(cls, name, wrap(getattr(cls, name)))
    return cls


class PeerTestCase(unittest.TestCase):
    """Each test starts its own peers; tearDown stops them and fails if one died on its own."""

    def setUp(self):
        self.peers = []
        self.clients = []

    def tearDown(self):
        for client in self.clients:
            client.close()
        for peer in self.peers:
            alive = peer.alive()
            status = peer.stop()
            # The engine keeps running on bad input: the peer must not have died on its own.
            self.assertTrue(alive, "the peer exited during the test (status %r)" % status)

    def peer(self, *args):
        if not PEER or not os.access(PEER, os.X_OK):
            self.fail("no negotiation_peer: pass --peer PATH or set NEGOTIATION_PEER (got %r)" % PEER)
        p = nc.Peer(PEER, "--nodes", NODES, *args)
        self.peers.append(p)
        return p

    def client(self, peer):
        c = nc.NegoClient(peer.endpoint)
        self.clients.append(c)
        return c

    def session(self, *peer_args, **init):
        """A peer, a client and an initialised session."""
        c = self.client(self.peer(*peer_args))
        c.init(**init)
        return c

    def refused(self, c, seq, codes, skip=()):
        """The error reply to `seq`, with one of `codes` (where the spec allows more than one)."""
        while True:
            msg = c.expect()
            if msg.is_error or msg.type not in skip:
                break
        self.assertTrue(msg.is_error and msg.seq == seq, "expected a refusal of seq %d, got %r"
                        % (seq, msg))
        self.assertIn(msg.code, codes, msg)
        return msg

    def agree(self, c, offer, mapping):
        """Answers `offer` with `mapping`, expects H's agreement and hands the jobs over."""
        c.answer(offer["txn"], offer["attempt"], True, mapping)
        end = c.expect(nc.END)
        self.assertEqual(end["txn"], offer["txn"])
        self.assertEqual(end["outcome"], "agreed", end)
        self.assertEqual(as_set(end["mapping"]), as_set(mapping), "§4: agreed = S's last mapping")
        c.end_response(offer["txn"])
        return end

    def drain(self, c, seconds):
        """Every message in the next `seconds`."""
        out = []
        while True:
            try:
                out.append(c.expect(timeout=seconds))
            except nc.NegoTimeout:
                return out

    def running_jobs(self, peer):
        """H's jobs as a new session sees them: RESPONSE_PROTOCOL_INIT `running` and the first
        STATUS_REPORT."""
        c = self.client(peer)
        running = c.init(status_interval_s=0.1)["running"]
        return running, c.expect(nc.STATUS, keep_status=True)
