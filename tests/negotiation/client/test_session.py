"""The session (§2, §3, §5.1): initialisation, the envelope, refusals, finalisation."""
import unittest

import nego_client as nc
from conformance_base import PeerTestCase, with_peer_log


@with_peer_log
class Session(PeerTestCase):
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

    def test_unreadable_message_reply_names_type_error(self):
        """negotiation.md §2 (as protocol.md §2): a message whose envelope cannot be read is
        answered with type "error" and seq 0."""
        c = self.client(self.peer())
        c.send_raw(b"\xc1")
        err = c.expect()
        self.assertEqual((err.code, err.type, err.seq), ("bad_message", "error", 0))

    def test_bad_envelope_version_reply_names_type_error(self):
        """negotiation.md §2: another envelope version is an envelope this side cannot read:
        type "error", seq 0."""
        c = self.client(self.peer())
        c.send(nc.INIT, {"version": 1, "max_attempts": 3, "timeout_s": 10,
                         "status_interval_s": 0, "name": "v2"}, v=2)
        err = c.expect()
        self.assertEqual((err.code, err.type, err.seq), ("bad_version", "error", 0))

    def test_init_again_replaces_the_session(self):
        """§5.1: PROTOCOL_INIT in a ready session is the peer starting over: the open
        transaction is abandoned and a new session begins."""
        c = self.session()
        c.request_offer()
        o = c.expect(nc.OFFER)
        c.start(o["txn"])
        self.assertTrue(c.expect(nc.START_RESPONSE)["accepted"])
        c.send_init()
        self.assertEqual(c.expect(nc.INIT_RESPONSE)["running"], [])
        # Not interested any more: a new request brings a new transaction.
        c.request_offer()
        self.assertGreater(c.expect(nc.OFFER)["txn"], o["txn"])

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
