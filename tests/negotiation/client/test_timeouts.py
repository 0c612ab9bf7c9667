"""Timeouts (§5.6): H abandons a transaction S leaves unanswered; crossing ends."""
import time

import nego_client as nc
from conformance_base import PeerTestCase, with_peer_log


@with_peer_log
class Timeouts(PeerTestCase):
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

    def test_h_abandons_a_first_offer_not_taken(self):
        c = self.session("--max-timeout", "60", timeout_s=1)
        c.request_offer()
        o = c.expect(nc.OFFER)
        end = c.expect(nc.END, timeout=10)  # neither START nor declined
        self.assertEqual((end["txn"], end["outcome"], end.get("reason")),
                         (o["txn"], "abandoned", "timeout"))
        c.end_response(o["txn"])
