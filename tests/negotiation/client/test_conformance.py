#!/usr/bin/python3
"""Conformance of an iHypervisor (negotiation_peer) to docs/negotiation.md, tested by an
iScheduler written from that page alone (nego_client.py; issue 20).

    /usr/bin/python3 test_conformance.py --peer PATH/negotiation_peer [unittest options]
or with NEGOTIATION_PEER=PATH in the environment. Each test starts its own peer process.
"""
import functools
import os
import sys
import time
import unittest

sys.dont_write_bytecode = True  # ctest runs this from the source tree: leave no __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nego_client as nc  # noqa: E402

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


@with_peer_log
class Conformance(unittest.TestCase):
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

    # -- §5.1 the session ----------------------------------------------------------------------
    def test_init_agrees_the_smaller_values(self):
        p = self.peer("--max-attempts", "10", "--max-timeout", "60", "--min-status-interval", "0.5")
        c = self.client(p)
        r = c.init(max_attempts=5, timeout_s=30, status_interval_s=0)
        self.assertEqual(r["version"], 1)
        self.assertEqual((r["max_attempts"], r["timeout_s"]), (5, 30), "S's are smaller")
        self.assertEqual(r["running"], [])
        # spec: 0 means "never"; raising it to H's smallest interval would turn it on.
        self.assertEqual(r["status_interval_s"], 0, "0 (never) is kept")
        c.expect_silence(1.0)  # no STATUS_REPORT at 0

        c2 = self.client(p)
        r2 = c2.init(max_attempts=20, timeout_s=100, status_interval_s=0.2)
        self.assertEqual((r2["max_attempts"], r2["timeout_s"]), (10, 60), "H's are smaller")
        self.assertAlmostEqual(r2["status_interval_s"], 0.5, msg="raised to H's smallest")

        c3 = self.client(p)
        r3 = c3.init(max_attempts=1, timeout_s=5, status_interval_s=2)
        self.assertEqual((r3["max_attempts"], r3["timeout_s"]), (1, 5))
        self.assertAlmostEqual(r3["status_interval_s"], 2, msg="above H's smallest: S's value")

    def test_bad_version_leaves_the_session_uninitialised(self):
        c = self.client(self.peer())
        seq = c.send_init(version=2)
        c.expect_error("bad_version", seq, nc.INIT)
        seq = c.request_offer()
        c.expect_error("not_initialised", seq, nc.REQUEST_OFFER)
        # The envelope's own version (§2, protocol.md §2).
        c.send(nc.INIT, {"version": 1, "max_attempts": 3, "timeout_s": 10, "status_interval_s": 0,
                         "name": "v2"}, v=2)
        self.assertEqual(c.expect().code, "bad_version")
        r = c.init()
        self.assertEqual(r["version"], 1)

    def test_bad_bytes_and_bad_fields_are_refused(self):
        c = self.client(self.peer())
        c.send_raw(b"\xc1")  # never valid msgpack
        self.assertEqual(c.expect().code, "bad_message")
        c.send_raw(nc.encode(nc.INIT, 99, {}) + b"\x00")  # trailing bytes
        self.assertEqual(c.expect().code, "bad_message")
        c.send_raw(nc.msgpack.packb([1, "nego.init", 3]))  # not a map
        self.assertEqual(c.expect().code, "bad_message")
        seq = c.send(nc.INIT, {"version": 1, "timeout_s": 10, "status_interval_s": 0, "name": "x"})
        err = c.expect_error("bad_field", seq, nc.INIT)
        self.assertIn("max_attempts", err.error.get("message", ""), "§3: the message names the field")
        seq = c.send(nc.INIT, {"version": 1, "max_attempts": "ten", "timeout_s": 10,
                               "status_interval_s": 0, "name": "x"})
        c.expect_error("bad_field", seq, nc.INIT)
        c.init()
        seq = c.send(nc.REQUEST_OFFER, {})
        c.expect_error("bad_field", seq, nc.REQUEST_OFFER)
        # Nothing changed: S is still not interested, so a good request gets an offer.
        c.request_offer()
        self.assertEqual(c.expect(nc.OFFER)["attempt"], 1)

    @unittest.expectedFailure  # reported: the peer answers with type "" (not "error")
    def test_unreadable_message_reply_names_type_error(self):
        """protocol.md §2: a message that cannot be read at all is answered with type "error"
        and seq 0; negotiation.md §2: a refusal repeats the refused type and seq."""
        c = self.client(self.peer())
        c.send_raw(b"\xc1")
        err = c.expect()
        self.assertEqual((err.code, err.type, err.seq), ("bad_message", "error", 0))

    @unittest.expectedFailure  # reported: the peer answers type "" seq 0
    def test_bad_envelope_version_reply_repeats_type_and_seq(self):
        """negotiation.md §2: an error reply carries the refused message's type and seq; a v=2
        envelope has both, readable."""
        c = self.client(self.peer())
        seq = c.send(nc.INIT, {"version": 1, "max_attempts": 3, "timeout_s": 10,
                               "status_interval_s": 0, "name": "v2"}, v=2)
        c.expect_error("bad_version", seq, nc.INIT)

    def test_unknown_type(self):
        c = self.session()
        seq = c.send("nego.bogus", {})
        c.expect_error("unknown_type", seq, "nego.bogus")

    def test_not_initialised_before_init(self):
        c = self.client(self.peer())
        for send in (lambda: c.request_offer(), lambda: c.start(1), lambda: c.urgent(1, 1),
                     lambda: c.finalize()):
            seq = send()
            c.expect_error("not_initialised", seq)
        c.init()

    def test_wrong_role(self):
        c = self.session()
        offer = {"txn": 1, "attempt": 1, "reason": "requested",
                 "offer": {"offer": 1, "virtual": False, "resources": []}}
        for msg_type, body in ((nc.OFFER, offer),
                               (nc.INIT_RESPONSE, {"version": 1, "max_attempts": 1, "timeout_s": 1,
                                                   "status_interval_s": 0, "running": []}),
                               (nc.START_RESPONSE, {"txn": 1, "accepted": True}),
                               (nc.STATUS, {"time": 0, "cores_total": 0, "cores_busy": 0,
                                            "utilisation": 0, "throughput_per_hour": 0,
                                            "mean_wait_s": 0, "jobs": []}),
                               (nc.URGENT_RESPONSE, {"job": 1, "started": False, "placement": [],
                                                     "victims": []})):
            with self.subTest(msg_type):
                seq = c.send(msg_type, body)
                c.expect_error("wrong_role", seq, msg_type)
        # An `agreed` end comes only from H (§4).
        c.request_offer()
        o = c.expect(nc.OFFER)
        # spec: NEGOTIATION_END is S's message too; only the outcome is H's: wrong_role (§3's
        # example is a message type) or invalid.
        seq = c.end(o["txn"], "agreed", [])
        self.refused(c, seq, ("wrong_role", "invalid"))

    # -- §5.2–§5.3 order -----------------------------------------------------------------------
    def test_out_of_order(self):
        c = self.session()
        # spec: START with no offer is out_of_order (§3: not allowed now) or unknown_transaction
        # (§3: not the open transaction's, since none is open).
        seq = c.start(1)
        self.refused(c, seq, ("out_of_order", "unknown_transaction"))
        seq = c.answer(1, 1, True, [])  # no offer open (see the test below)
        self.refused(c, seq, ("out_of_order", "unknown_transaction"))
        seq = c.send_init()
        c.expect_error("out_of_order", seq, nc.INIT)  # already ready
        c.request_offer()
        o = c.expect(nc.OFFER)
        self.assertEqual((o["attempt"], o["reason"]), (1, "requested"))
        self.assertEqual(set(nc.offered_cores(o.body)), ALL_CORES, "all free cores offered")
        self.assertFalse(o["offer"]["virtual"])
        seq = c.request_offer()
        c.expect_error("out_of_order", seq, nc.REQUEST_OFFER)  # already interested
        seq = c.answer(o["txn"], 1, True, nc.map_jobs(o.body, [(1, 1)]))
        c.expect_error("out_of_order", seq, nc.OFFER_RESPONSE)  # before NEGOTIATION_START
        # The refusals changed nothing: the transaction starts and agrees.
        c.start(o["txn"])
        self.assertTrue(c.expect(nc.START_RESPONSE)["accepted"])
        self.agree(c, o, nc.map_jobs(o.body, [(1, 1)]))

    @unittest.expectedFailure  # reported: the peer answers unknown_transaction
    def test_answer_with_no_offer_open_is_out_of_order(self):
        """§3's own example of out_of_order: RESPONSE_RESOURCE_OFFER with no offer open."""
        c = self.session()
        seq = c.answer(1, 1, True, [])
        c.expect_error("out_of_order", seq, nc.OFFER_RESPONSE)

    def test_unknown_transaction(self):
        c = self.session()
        c.request_offer()
        o = c.expect(nc.OFFER)
        txn = o["txn"]
        seq = c.start(txn + 1)
        c.expect_error("unknown_transaction", seq, nc.START)
        c.start(txn)
        self.assertTrue(c.expect(nc.START_RESPONSE)["accepted"])
        mapping = nc.map_jobs(o.body, [(1, 2)])
        seq = c.answer(txn, 2, True, mapping)
        c.expect_error("unknown_transaction", seq, nc.OFFER_RESPONSE)  # wrong attempt
        seq = c.answer(txn + 1, 1, True, mapping)
        c.expect_error("unknown_transaction", seq, nc.OFFER_RESPONSE)  # wrong txn
        seq = c.end(txn + 1, "abandoned", reason="test")
        c.expect_error("unknown_transaction", seq, nc.END)
        self.agree(c, o, mapping)

    # -- §5.5 the mapping check --------------------------------------------------------------
    def test_invalid_mapping_keeps_the_offer_open(self):
        c = self.session()
        o = c.open_transaction()
        txn = o["txn"]
        bad = {
            "a core not offered": [nc.placement(1, "n1", [99])],
            "a node not offered": [nc.placement(1, "nx", [0])],
            "a core twice in a placement": [nc.placement(1, "n1", [0, 0])],
            "a core in two placements": [nc.placement(1, "n1", [0]), nc.placement(2, "n1", [0])],
            "a job twice on a node": [nc.placement(1, "n1", [0]), nc.placement(1, "n1", [1])],
        }
        for what, mapping in bad.items():
            with self.subTest(what):
                seq = c.answer(txn, 1, True, mapping)
                c.expect_error("invalid", seq, nc.OFFER_RESPONSE)
        # Still open at attempt 1, and no new offer came.
        self.agree(c, o, [nc.placement(1, "n1", [0, 1]), nc.placement(1, "n2", [0])])

    # -- §5.3 a negotiation ------------------------------------------------------------------
    def test_mapping_rejected_then_agreed(self):
        c = self.session("--reject-mappings", "2", "--max-attempts", "10", max_attempts=10)
        o = c.open_transaction()
        txn = o["txn"]
        for attempt in (1, 2):
            mapping = nc.map_jobs(o.body, [(1, 2), (2, 1)])
            c.answer(txn, attempt, True, mapping)
            o = c.expect(nc.OFFER)
            self.assertEqual((o["txn"], o["attempt"]), (txn, attempt + 1))
            self.assertTrue(o["reason"].startswith("mapping_rejected"), o)
            self.assertEqual(set(nc.offered_cores(o.body)), ALL_CORES, "the same free cores")
        mapping = nc.map_jobs(o.body, [(1, 2), (2, 1)])
        self.agree(c, o, mapping)
        # S is still interested and cores are free: a new transaction, reason "changed".
        o = c.expect(nc.OFFER)
        self.assertGreater(o["txn"], txn)
        self.assertEqual((o["attempt"], o["reason"]), (1, "changed"))
        self.assertEqual(set(nc.offered_cores(o.body)), ALL_CORES - set(cores_of(mapping)))
        # S rejects an offer: H offers again.
        c.start(o["txn"])
        self.assertTrue(c.expect(nc.START_RESPONSE)["accepted"])
        c.answer(o["txn"], 1, False, [], reason="too small")
        o2 = c.expect(nc.OFFER)
        self.assertEqual((o2["txn"], o2["attempt"], o2["reason"]), (o["txn"], 2, "offer_rejected"))
        self.assertNotEqual(o2["offer"]["offer"], o["offer"]["offer"], "offer ids are unique")

    def test_attempt_limit(self):
        c = self.session("--reject-mappings", "100", "--max-attempts", "10", max_attempts=3)
        o = c.open_transaction()
        txn = o["txn"]
        for attempt in (1, 2):
            c.answer(txn, attempt, True, nc.map_jobs(o.body, [(1, 1)]))
            o = c.expect(nc.OFFER)
            self.assertEqual(o["attempt"], attempt + 1)
        # The last attempt: S may not reject, H may not either.
        seq = c.answer(txn, 3, False, [], reason="no")
        c.expect_error("attempt_limit", seq, nc.OFFER_RESPONSE)
        self.agree(c, o, nc.map_jobs(o.body, [(1, 1)]))

    def test_attempt_limit_when_s_rejects_offers(self):
        c = self.session(max_attempts=2)
        o = c.open_transaction()
        c.answer(o["txn"], 1, False, [], reason="no")
        o = c.expect(nc.OFFER)
        self.assertEqual((o["attempt"], o["reason"]), (2, "offer_rejected"))
        seq = c.answer(o["txn"], 2, False, [], reason="no")
        c.expect_error("attempt_limit", seq, nc.OFFER_RESPONSE)
        # An empty mapping is an acceptance too (§4).
        self.agree(c, o, [])

    def test_decline_stops_offers_until_requested(self):
        c = self.session()
        c.request_offer()
        o = c.expect(nc.OFFER)
        c.end(o["txn"], "declined")
        self.assertEqual(c.expect(nc.END_RESPONSE)["txn"], o["txn"])
        c.expect_silence(1.0)
        # A change in the partition (an urgent job starts) brings no offer: S is not interested.
        c.urgent(50, 2)
        self.assertTrue(c.expect(nc.URGENT_RESPONSE)["started"])
        c.expect_silence(1.0)
        c.request_offer()
        o2 = c.expect(nc.OFFER)
        self.assertGreater(o2["txn"], o["txn"])
        self.assertEqual((o2["attempt"], o2["reason"]), (1, "requested"))
        self.assertEqual(len(nc.offered_cores(o2.body)), 6, "the urgent job's 2 cores are busy")
        # declined is only for a first offer that S does not take.
        c.start(o2["txn"])
        self.assertTrue(c.expect(nc.START_RESPONSE)["accepted"])

    def test_abandon_starts_nothing(self):
        p = self.peer("--reject-mappings", "1")
        c = self.client(p)
        c.init(status_interval_s=0)
        o = c.open_transaction()
        c.answer(o["txn"], 1, True, [nc.placement(5, "n1", [0])])
        o = c.expect(nc.OFFER)
        self.assertEqual(o["attempt"], 2)
        c.end(o["txn"], "abandoned", reason="changed my mind")
        self.assertEqual(c.expect(nc.END_RESPONSE)["txn"], o["txn"])
        # spec: an answer to a closed transaction: unknown_transaction (§3 "not the open
        # transaction's") or out_of_order (§3 "no offer open"); §5.6 says unknown_transaction.
        # H MAY offer again at once (a new txn): skipped here.
        seq = c.answer(o["txn"], 2, True, [nc.placement(5, "n1", [0])])
        self.refused(c, seq, ("unknown_transaction", "out_of_order"), skip=(nc.OFFER,))
        c2 = self.client(p)
        self.assertNotIn(5, c2.init()["running"])

    def test_h_abandons_after_timeout(self):
        c = self.session("--max-timeout", "60", timeout_s=1)
        o = c.open_transaction()
        started = time.monotonic()
        end = c.expect(nc.END, timeout=10)  # S stays silent
        waited = time.monotonic() - started
        self.assertEqual((end["txn"], end["outcome"], end.get("reason")),
                         (o["txn"], "abandoned", "timeout"))
        self.assertGreaterEqual(waited, 0.9, "not before timeout_s")
        c.end_response(o["txn"])
        # The transaction is closed: a late answer is unknown_transaction (§5.6).
        # H MAY offer again at once (a new txn): skipped here.
        seq = c.answer(o["txn"], 1, True, nc.map_jobs(o.body, [(3, 1)]))
        c.expect_error("unknown_transaction", seq, nc.OFFER_RESPONSE, skip=(nc.OFFER,))

    def test_crossing_ends_after_a_timeout(self):
        """§5.6: after H's timeout end, S's own NEGOTIATION_END of that transaction is still
        answered, and S's RESPONSE_NEGOTIATION_END after it is taken without effect."""
        c = self.session("--max-timeout", "60", timeout_s=1)
        o = c.open_transaction()
        end = c.expect(nc.END, timeout=10)
        self.assertEqual((end["outcome"], end.get("reason")), ("abandoned", "timeout"))
        c.end(o["txn"], "abandoned", reason="crossed")
        # H's next offer (new txn) may come first.
        while True:
            m = c.expect((nc.END_RESPONSE, nc.OFFER))
            if m.type == nc.END_RESPONSE:
                break
        self.assertEqual(m["txn"], o["txn"])
        c.end_response(o["txn"])
        for m in self.drain(c, 0.5):
            self.assertFalse(m.is_error, "RESPONSE_NEGOTIATION_END refused: %r" % (m,))

    def drain(self, c, seconds):
        """Every message in the next `seconds`."""
        out = []
        while True:
            try:
                out.append(c.expect(timeout=seconds))
            except nc.NegoTimeout:
                return out

    def test_h_abandons_a_first_offer_not_taken(self):
        c = self.session("--max-timeout", "60", timeout_s=1)
        c.request_offer()
        o = c.expect(nc.OFFER)
        end = c.expect(nc.END, timeout=10)  # neither START nor declined
        self.assertEqual((end["txn"], end["outcome"], end.get("reason")),
                         (o["txn"], "abandoned", "timeout"))
        c.end_response(o["txn"])

    # -- §5.7 feedback and urgent jobs -------------------------------------------------------
    def test_status_report_at_the_agreed_interval(self):
        c = self.session("--min-status-interval", "0.1", status_interval_s=0.3)
        reports = c.collect_status(2.0)
        self.assertGreaterEqual(len(reports), 3, "about 6 reports in 2 s at 0.3 s")
        self.assertLessEqual(len(reports), 10, "not much more often than every 0.3 s")
        times = [r["time"] for r in reports]
        gaps = sorted(b - a for a, b in zip(times, times[1:]))
        median = gaps[len(gaps) // 2]
        self.assertGreater(median, 0.2)
        self.assertLess(median, 0.6)
        r = reports[-1]
        self.assertEqual((r["cores_total"], r["cores_busy"], r["jobs"]), (8, 0, []))
        for field in ("utilisation", "throughput_per_hour", "mean_wait_s"):
            self.assertIn(field, r.body)

    def test_urgent_job(self):
        c = self.session(status_interval_s=0.2)
        c.urgent(100, 3)
        r = c.expect(nc.URGENT_RESPONSE)
        self.assertEqual((r["job"], r["started"], r["victims"]), (100, True, []))
        placed = cores_of(r["placement"])
        self.assertEqual(len(placed), 3)
        self.assertEqual(len(set(placed)), 3, "no core twice")
        self.assertTrue(set(placed) <= ALL_CORES)
        self.assertTrue(all(p["job"] == 100 for p in r["placement"]))
        c.urgent(101, 6)  # 5 cores are free
        r = c.expect(nc.URGENT_RESPONSE)
        self.assertEqual((r["job"], r["started"]), (101, False))
        self.assertTrue(r.get("reason"), "a refusal says why")
        c.urgent(102, 4, nodes=1)  # fits on one node only if placement was packed
        r = c.expect(nc.URGENT_RESPONSE)
        self.assertEqual(r["job"], 102)
        if r["started"]:
            self.assertEqual(len({p["node"] for p in r["placement"]}), 1, "at most 1 node")
        else:
            self.assertTrue(r.get("reason"))
        # The urgent job runs: STATUS_REPORT lists it.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            s = c.expect(nc.STATUS, keep_status=True)
            if any(j["job"] == 100 for j in s["jobs"]):
                break
        else:
            self.fail("job 100 never appeared in STATUS_REPORT jobs")

    # -- §5.1 finalisation -------------------------------------------------------------------
    def test_finalize(self):
        p = self.peer("--reject-mappings", "1")
        c = self.client(p)
        c.init()
        o = c.open_transaction()
        c.answer(o["txn"], 1, True, [nc.placement(8, "n2", [1])])
        self.assertEqual(c.expect(nc.OFFER)["attempt"], 2)
        c.finalize("bye")  # abandons the open transaction
        c.expect(nc.FINALIZE_RESPONSE)
        seq = c.request_offer()
        c.expect_error("not_initialised", seq, nc.REQUEST_OFFER)
        self.assertNotIn(8, c.init()["running"], "a finalised transaction starts nothing")

    def test_refused_init_and_request_change_nothing(self):
        c = self.client(self.peer())
        # spec: a bound broken (max_attempts ≥ 1, pending ≥ 1) is bad_field or invalid.
        seq = c.send_init(max_attempts=0)
        self.refused(c, seq, ("bad_field", "invalid"))
        seq = c.request_offer()
        c.expect_error("not_initialised", seq, nc.REQUEST_OFFER)
        c.init()
        seq = c.request_offer(pending=0)
        self.refused(c, seq, ("bad_field", "invalid"))
        c.expect_silence(0.5)  # not interested: no offer
        c.request_offer(pending=2)
        self.assertEqual(c.expect(nc.OFFER)["reason"], "requested")

    def test_declined_only_on_a_first_offer_not_taken(self):
        c = self.session()
        o = c.open_transaction()
        # spec: §4 "declined ... on a first offer it does not take": after START it is refused;
        # out_of_order or invalid.
        seq = c.end(o["txn"], "declined")
        self.refused(c, seq, ("out_of_order", "invalid"))
        self.agree(c, o, nc.map_jobs(o.body, [(1, 1)]))

    def test_urgent_job_inside_a_transaction(self):
        c = self.session()
        o = c.open_transaction()
        c.urgent(60, 1)
        r = c.expect(nc.URGENT_RESPONSE)
        self.assertEqual((r["job"], r["started"]), (60, True))
        # The transaction goes on; the mapping avoids the urgent job's core.
        urgent_core = set(cores_of(r["placement"]))
        free = [(n, k) for n, k in nc.offered_cores(o.body) if (n, k) not in urgent_core]
        self.agree(c, o, [nc.placement(61, free[0][0], [free[0][1]])])

    def test_job_end_frees_cores_and_brings_an_offer(self):
        c = self.session("--job-seconds", "1", status_interval_s=0.2)
        o = c.open_transaction()
        self.agree(c, o, nc.map_jobs(o.body, [(21, 8)]))  # every core
        ended = False
        deadline = time.monotonic() + 10
        while True:
            m = c.expect((nc.STATUS, nc.OFFER), timeout=max(0.0, deadline - time.monotonic()),
                         keep_status=True)
            if m.type == nc.STATUS:
                ids = [j["job"] for j in m["jobs"]]
                if 21 in ids:
                    self.assertFalse(ended, "job 21 listed again after it ended")
                    self.assertEqual(m["cores_busy"], 8)
                elif not ended and m["cores_busy"] == 0:
                    ended = True
                continue
            # No free cores while job 21 ran: the first offer comes after it ends.
            self.assertEqual((m["attempt"], m["reason"]), (1, "changed"))
            self.assertEqual(set(nc.offered_cores(m.body)), ALL_CORES)
            break
        c2 = self.client(self.peers[0])
        self.assertNotIn(21, c2.init()["running"], "an ended job is not running")

    # -- §6 no job lost, none started twice --------------------------------------------------
    def running_jobs(self, peer):
        """H's jobs as a new session sees them: RESPONSE_PROTOCOL_INIT `running` and the first
        STATUS_REPORT."""
        c = self.client(peer)
        running = c.init(status_interval_s=0.1)["running"]
        return running, c.expect(nc.STATUS, keep_status=True)

    @unittest.expectedFailure  # reported: the second session's agreed job is dropped
    def test_two_sessions_do_not_lose_an_agreed_job(self):
        """§6: a job of an agreed mapping appears in STATUS_REPORT `jobs` (and `running`) until it
        ends. Two iSchedulers, offered the same free cores, each agree a job on the same core."""
        p = self.peer()
        a, b = self.client(p), self.client(p)
        a.init()
        b.init()
        oa, ob = a.open_transaction(), b.open_transaction()
        core = nc.offered_cores(oa.body)[-1]
        self.assertIn(core, nc.offered_cores(ob.body))
        a.answer(oa["txn"], 1, True, [nc.placement(100, core[0], [core[1]])])
        b.answer(ob["txn"], 1, True, [nc.placement(200, core[0], [core[1]])])
        for c, o in ((a, oa), (b, ob)):
            m = c.expect()
            if m.type == nc.END and m["outcome"] == "agreed":
                c.end_response(o["txn"])  # the job is handed over: H must run it
        running, status = self.running_jobs(p)
        listed = {j["job"] for j in status["jobs"]}
        handed = {p_["job"] for c in (a, b) for m in c.received
                  if m.type == nc.END and not m.is_error and m["outcome"] == "agreed"
                  for p_ in m["mapping"]}
        self.assertEqual(handed - set(running), set(), "agreed and handed over, not running")
        self.assertEqual(handed - listed, set(), "agreed and handed over, not in STATUS_REPORT")

    @unittest.expectedFailure  # reported: job 1 is started twice, its first core never freed
    def test_urgent_job_with_a_running_id_is_not_started_twice(self):
        """§6 "none started twice": an URGENT_JOB naming a job H runs (spec: not said; refused
        or not started is the reading here); H's report stays consistent either way."""
        c = self.session()
        c.urgent(1, 1)
        self.assertTrue(c.expect(nc.URGENT_RESPONSE)["started"])
        c.urgent(1, 2)
        r = c.expect()
        self.assertTrue(r.is_error or r["started"] is False, r)
        _, status = self.running_jobs(self.peers[0])
        self.assertEqual(status["cores_busy"], sum(j["cores"] for j in status["jobs"]), status)

    def test_agreed_job_is_listed_and_survives_a_reconnect(self):
        p = self.peer("--running", "7,9")
        c = self.client(p)
        r = c.init(status_interval_s=0.2)
        self.assertEqual(sorted(r["running"]), [7, 9])
        o = c.open_transaction()
        mapping = nc.map_jobs(o.body, [(11, 2)])
        self.agree(c, o, mapping)
        # Cores are still free and S interested: an offer ("changed") comes among the reports.
        jobs, o, report = {}, None, None
        deadline = time.monotonic() + 5
        while 11 not in jobs or o is None:
            m = c.expect((nc.STATUS, nc.OFFER), timeout=max(0.0, deadline - time.monotonic()),
                         keep_status=True)
            if m.type == nc.OFFER:
                o = m
            else:
                report, jobs = m, {j["job"]: j for j in m["jobs"]}
        self.assertEqual(jobs[11]["state"], "running")
        self.assertGreaterEqual(report["cores_busy"], 2)
        # spec: a job's `cores` may be a count or the list of its cores; either must say 2.
        cores = jobs[11]["cores"]
        self.assertEqual(cores if isinstance(cores, int) else len(cores), 2, jobs[11])
        # A job agreed but never handed over (no RESPONSE_NEGOTIATION_END) is not started.
        self.assertEqual(o["reason"], "changed")
        c.start(o["txn"])
        self.assertTrue(c.expect(nc.START_RESPONSE)["accepted"])
        c.answer(o["txn"], 1, True, nc.map_jobs(o.body, [(12, 1)]))
        self.assertEqual(c.expect(nc.END)["outcome"], "agreed")
        c.close()  # S goes away
        self.clients.remove(c)
        c2 = self.client(p)
        running = c2.init()["running"]
        self.assertIn(11, running)
        self.assertNotIn(12, running, "started only on RESPONSE_NEGOTIATION_END")
        self.assertEqual(sorted(running), sorted(set(running)), "each job once")


def main():
    global PEER
    args = sys.argv[:]
    if "--peer" in args:
        i = args.index("--peer")
        PEER = args[i + 1]
        del args[i:i + 2]
    unittest.main(argv=args, verbosity=2)


if __name__ == "__main__":
    main()
