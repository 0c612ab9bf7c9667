#!/usr/bin/python3
"""The iScheduler written from docs/negotiation.md alone (tests/negotiation/client/nego_client.py)
against the real iHypervisor component and its Lua policy on a ROUTER socket (invasive_peer,
issue 20): the bundled socket_pack policy rejects a mapping that splits a job over sockets and
re-offers a virtual view; an edit of the policy file is picked up live, a broken edit is not.

    /usr/bin/python3 test_live_policy.py --peer PATH/invasive_peer --policy PATH/socket_pack.lua
"""
import os
import shutil
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "negotiation", "client"))
import nego_client as nc  # noqa: E402

PEER = ""
POLICY = ""
# 2 nodes (n0, n1) of 2 sockets of 4 cores: socket 0 holds cores 0-3, socket 1 cores 4-7.
SHAPE = ("--nodes", "2", "--sockets", "2", "--cores", "4")


class LivePolicy(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="invasive_peer_")
        self.policy = os.path.join(self.dir, "policy.lua")
        shutil.copy(POLICY, self.policy)
        self.peer = nc.Peer(PEER, "--policy", self.policy, *SHAPE)
        self.c = nc.NegoClient(self.peer.endpoint)

    def tearDown(self):
        self.c.close()
        alive = self.peer.alive()
        log = self.peer.log()
        self.peer.stop()
        shutil.rmtree(self.dir)
        self.assertTrue(alive, "the peer exited during the test:\n" + log)

    def write_policy(self, text):
        tmp = self.policy + ".new"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, self.policy)

    def split_then_packed(self, job):
        """A transaction: a mapping that splits `job` over both sockets of n0, then a packed
        one. Returns the second offer and the end."""
        o = self.c.open_transaction(pending=1)
        self.assertFalse(o["offer"]["virtual"])
        free = [core for node, core in nc.offered_cores(o.body) if node == "n0"]
        split = [c for c in free if c in (3, 4)]
        self.assertEqual(split, [3, 4], "cores 3 and 4 of n0 are offered")
        self.c.answer(o["txn"], 1, True, [nc.placement(job, "n0", [3, 4])])
        return o, self.c.expect((nc.OFFER, nc.END))

    def test_a_split_mapping_is_rejected_and_the_reoffer_steers(self):
        self.c.init(max_attempts=3)
        o, again = self.split_then_packed(1)
        self.assertEqual(again.type, nc.OFFER, again)
        self.assertEqual((again["txn"], again["attempt"]), (o["txn"], 2))
        self.assertEqual(again["reason"], "mapping_rejected: job 1 split over 2 sockets (needs 1)")
        self.assertTrue(again["offer"]["virtual"])
        cores = set(nc.offered_cores(again.body))
        self.assertNotIn(("n0", 3), cores, "the fragment where job 1 began is held back")
        self.assertIn(("n0", 4), cores)
        packed = [nc.placement(1, "n0", [4, 5])]
        self.c.answer(o["txn"], 2, True, packed)
        end = self.c.expect(nc.END)
        self.assertEqual(end["outcome"], "agreed")
        self.assertEqual(end["mapping"], packed)
        self.c.end_response(o["txn"])
        # The partition changed and S is still interested: a new offer without job 1's cores.
        nxt = self.c.expect(nc.OFFER)
        self.assertEqual((nxt["attempt"], nxt["reason"]), (1, "changed"))
        cores = set(nc.offered_cores(nxt.body))
        self.assertFalse({("n0", 4), ("n0", 5)} & cores)
        self.assertEqual(len(cores), 14)
        self.c.end(nxt["txn"], "declined")
        self.c.expect(nc.END_RESPONSE)

    def test_at_the_attempt_limit_the_split_mapping_is_agreed(self):
        self.c.init(max_attempts=2)
        o, again = self.split_then_packed(1)
        self.assertEqual(again["attempt"], 2)
        self.c.answer(o["txn"], 2, True, [nc.placement(1, "n0", [2, 4])])  # split again
        end = self.c.expect(nc.END)
        self.assertEqual(end["outcome"], "agreed", "§5.4: the last mapping is accepted")
        self.c.end_response(o["txn"])

    def test_urgent_jobs_start_on_free_cores_then_by_suspending(self):
        self.c.init(max_attempts=3)
        o = self.c.open_transaction(pending=1)
        whole_n0 = [nc.placement(1, "n0", range(8))]  # two sockets for 8 cores: packed
        self.c.answer(o["txn"], 1, True, whole_n0)
        end = self.c.expect(nc.END)
        self.assertEqual(end["outcome"], "agreed")
        self.c.end_response(o["txn"])
        nxt = self.c.expect(nc.OFFER)  # n1 is left; nothing else waits
        self.c.end(nxt["txn"], "declined")
        self.c.expect(nc.END_RESPONSE)
        # n1 is free: job 9 starts there, no victim.
        self.c.urgent(9, 8, 1)
        r = self.c.expect(nc.URGENT_RESPONSE)
        self.assertTrue(r["started"], r)
        self.assertEqual(r["placement"], [nc.placement(9, "n1", range(8))])
        self.assertEqual(r["victims"], [])
        # Nothing is free: job 10 suspends job 1 (the latest started on n0).
        self.c.urgent(10, 4, 1)
        r = self.c.expect(nc.URGENT_RESPONSE)
        self.assertTrue(r["started"], r)
        self.assertEqual(r["placement"], [nc.placement(10, "n0", [0, 1, 2, 3])])
        self.assertEqual(r["victims"], [{"job": 1, "action": "suspended", "cores": 8}])
        # A job H runs cannot be urgent again (§5.7: invalid).
        seq = self.c.urgent(9, 1, 1)
        self.c.expect_error("invalid", seq, nc.URGENT)

    def test_edits_are_reloaded_live_and_a_broken_one_is_not(self):
        self.c.init(max_attempts=5)
        self.write_policy("return { make_offer = function( end }")  # a syntax error
        # The last good version still rejects the split (the broken edit has been seen: the
        # peer checks every 0.2 s; wait for its log line).
        deadline = time.monotonic() + 30
        while "policy.lua:1:" not in self.peer.log():
            self.assertLess(time.monotonic(), deadline, self.peer.log())
            time.sleep(0.05)
        o, again = self.split_then_packed(1)
        self.assertEqual(again.type, nc.OFFER)
        self.c.end(o["txn"], "abandoned", reason="test")
        self.c.expect(nc.END_RESPONSE)
        # A working edit that accepts everything.
        with open(POLICY) as f:
            text = f.read()
        self.write_policy(text.replace('local H = { name = "socket_pack" }',
                                       'local H = { name = "accept_all" }')
                          .replace("function H.judge(offer, mapping, view)",
                                   "function H.judge(offer, mapping, view)\n  do return true end"))
        while "policy reloaded: accept_all" not in self.peer.log():
            self.assertLess(time.monotonic(), deadline, self.peer.log())
            time.sleep(0.05)
        nxt = self.c.expect(nc.OFFER)  # the retry after the abandoned transaction
        self.c.start(nxt["txn"])
        self.assertTrue(self.c.expect(nc.START_RESPONSE)["accepted"])
        self.c.answer(nxt["txn"], 1, True, [nc.placement(2, "n0", [3, 4])])
        end = self.c.expect(nc.END)
        self.assertEqual(end["outcome"], "agreed", "the new version accepts the split")


def main():
    global PEER, POLICY
    args = sys.argv[1:]
    for flag in ("--peer", "--policy"):
        if flag in args:
            i = args.index(flag)
            globals()[flag[2:].upper()] = args[i + 1]
            del args[i:i + 2]
    if not PEER or not POLICY:
        print("usage: test_live_policy.py --peer PATH --policy PATH", file=sys.stderr)
        return 2
    unittest.main(argv=[sys.argv[0], *args], verbosity=2)


if __name__ == "__main__":
    sys.exit(main())
