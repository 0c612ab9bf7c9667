"""Feedback and urgent jobs (§5.7): STATUS_REPORT at the agreed interval, URGENT_JOB."""
import time
import unittest

import nego_client as nc
from conformance_base import ALL_CORES, cores_of, PeerTestCase, with_peer_log


@with_peer_log
class Feedback(PeerTestCase):
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

    def test_urgent_job_takes_cores_of_an_open_offer(self):
        """§5.7: with no other free core, H starts an urgent job on cores of an open offer: it
        abandons that transaction first, then offers again without them."""
        c = self.session()
        o = c.open_transaction()  # every free core is in this offer
        c.urgent(60, 1)
        end = c.expect(nc.END)
        self.assertEqual((end["txn"], end["outcome"]), (o["txn"], "abandoned"))
        r = c.expect(nc.URGENT_RESPONSE)
        self.assertEqual((r["job"], r["started"]), (60, True))
        c.end_response(o["txn"])
        o2 = c.expect(nc.OFFER)  # still interested: a new transaction
        self.assertGreater(o2["txn"], o["txn"])
        urgent_core = set(cores_of(r["placement"]))
        self.assertFalse(urgent_core & set(nc.offered_cores(o2.body)))
        c.start(o2["txn"])
        self.assertTrue(c.expect(nc.START_RESPONSE)["accepted"])
        free = nc.offered_cores(o2.body)
        self.agree(c, o2, [nc.placement(61, free[0][0], [free[0][1]])])

    def test_urgent_job_with_a_running_id_is_not_started_twice(self):
        """§5.7: an URGENT_JOB naming a job H runs is refused invalid (none started twice);
        H's report stays consistent."""
        c = self.session()
        c.urgent(1, 1)
        self.assertTrue(c.expect(nc.URGENT_RESPONSE)["started"])
        c.urgent(1, 2)
        r = c.expect()
        self.assertEqual(r.code, "invalid", r)
        _, status = self.running_jobs(self.peers[0])
        self.assertEqual(status["cores_busy"], sum(j["cores"] for j in status["jobs"]), status)
