#!/usr/bin/python3
"""Conformance of an iHypervisor (negotiation_peer) to docs/negotiation.md, tested by an
iScheduler written from that page alone (nego_client.py; issue 20). Runs every test_*.py here:

    /usr/bin/python3 test_conformance.py --peer PATH/negotiation_peer [unittest options]
or with NEGOTIATION_PEER=PATH in the environment. Each test starts its own peer process.

A test marked expectedFailure records a place where the peer differs from the spec (its comment
says how); once that is fixed it becomes an unexpected success, which fails the run: then the
mark goes.
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True  # ctest runs this from the source tree: leave no __pycache__
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import conformance_base  # noqa: E402


def main():
    args = sys.argv[1:]
    if "--peer" in args:
        i = args.index("--peer")
        conformance_base.PEER = args[i + 1]
        del args[i:i + 2]
    names = sorted(f[:-3] for f in os.listdir(HERE) if f.startswith("test_") and f.endswith(".py")
                   and f != "test_conformance.py")
    explicit = any(a.startswith("test_") for a in args)  # modules or tests named: only those
    unittest.main(module=None, argv=[sys.argv[0], *args, *([] if explicit else names)],
                  verbosity=2)


if __name__ == "__main__":
    main()
