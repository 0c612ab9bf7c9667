"""Transactions (§5.2–§5.5): order, ids, the mapping check, rejections, the attempt limit,
declining, abandoning."""
import unittest

import nego_client as nc
from conformance_base import ALL_CORES, cores_of, PeerTestCase, with_peer_log


@with_peer_log
class Transaction(PeerTestCase):
    def test_out_of_order(self):
        c = self.session()
        # spec: START with no offer is out_of_order (§3: not allowed now) or unknown_transaction
        # (§3: not the open transaction's, since none is open).
        seq = c.start(1)
        self.refused(c, seq, ("out_of_order", "unknown_transaction"))
        seq = c.answer(1, 1, True, [])  # no offer open (see the test below)
        self.refused(c, seq, ("out_of_order", "unknown_transaction"))
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

    def test_answer_with_no_offer_open_is_an_unknown_transaction(self):
        """§3: a txn that names no open transaction is unknown_transaction (checked before the
        phase: §3's order)."""
        c = self.session()
        seq = c.answer(1, 1, True, [])
        c.expect_error("unknown_transaction", seq, nc.OFFER_RESPONSE)

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

    def test_declined_only_on_a_first_offer_not_taken(self):
        c = self.session()
        o = c.open_transaction()
        # spec: §4 "declined ... on a first offer it does not take": after START it is refused;
        # out_of_order or invalid.
        seq = c.end(o["txn"], "declined")
        self.refused(c, seq, ("out_of_order", "invalid"))
        self.agree(c, o, nc.map_jobs(o.body, [(1, 1)]))

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
