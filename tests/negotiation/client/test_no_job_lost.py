"""No job lost, none started twice (§6): agreed jobs run, are listed, and survive a reconnect."""
import time
import unittest

import nego_client as nc
from conformance_base import ALL_CORES, PeerTestCase, with_peer_log


@with_peer_log
class NoJobLost(PeerTestCase):
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

    def test_two_sessions_share_no_core_and_lose_no_job(self):
        """§5.8: an open offer holds its cores, so a second iScheduler is offered only what is
        left once the first transaction closes; both agreed jobs run (§6)."""
        p = self.peer()
        a, b = self.client(p), self.client(p)
        a.init()
        b.init()
        oa = a.open_transaction()  # every free core
        b.request_offer()
        b.expect_silence(0.5)  # nothing is free for b while a's offer holds it all
        core = nc.offered_cores(oa.body)[0]
        self.agree(a, oa, [nc.placement(100, core[0], [core[1]])])
        # a is still interested: offered the rest, it declines (its queue is empty).
        oa2 = a.expect(nc.OFFER)
        a.end(oa2["txn"], "declined", reason="queue_empty")
        a.expect(nc.END_RESPONSE)
        ob = b.expect(nc.OFFER)
        self.assertNotIn(core, nc.offered_cores(ob.body))
        b.start(ob["txn"])
        self.assertTrue(b.expect(nc.START_RESPONSE)["accepted"])
        other = nc.offered_cores(ob.body)[0]
        self.agree(b, ob, [nc.placement(200, other[0], [other[1]])])
        running, status = self.running_jobs(p)
        self.assertEqual({100, 200} - set(running), set(), "agreed and handed over, not running")
        self.assertEqual({100, 200} - {j["job"] for j in status["jobs"]}, set(), status)
