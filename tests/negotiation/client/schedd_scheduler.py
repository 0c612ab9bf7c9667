#!/usr/bin/python3
"""Another batch system's iScheduler against a live schedd's iHypervisor (issue 20 items 3, 5):
nego_client.py (written from docs/negotiation.md alone) maps one job of schedd's negotiated
partition onto the first offer and answers until the transaction ends agreed. Prints the agreed
mapping as JSON; exits 1 when the transaction does not end agreed.

    /usr/bin/python3 schedd_scheduler.py ENDPOINT JOB CORES
"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nego_client as nc  # noqa: E402


def main():
    endpoint, job, cores = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    c = nc.NegoClient(endpoint, default_timeout=30.0)
    try:
        c.init(max_attempts=3, timeout_s=30)
        offer = c.open_transaction(pending=1)
        while True:
            c.answer(offer["txn"], offer["attempt"], True,
                     nc.map_jobs(offer.body, [(job, cores)]))
            msg = c.expect((nc.OFFER, nc.END))
            if msg.type == nc.OFFER:  # the mapping was rejected: map the re-offer
                offer = msg
                continue
            c.end_response(msg["txn"])
            if msg["outcome"] != "agreed":
                print("not agreed: %r" % (msg,), file=sys.stderr)
                return 1
            print(json.dumps(msg["mapping"]))
            return 0
    finally:
        c.close()


if __name__ == "__main__":
    sys.exit(main())
