"""An iScheduler-side client of the negotiation protocol, written from docs/negotiation.md alone.

Issue 20 asks for a peer written from the specification only, so that the spec (not the C++ code)
is what both sides agree on. Nothing here is derived from sched's implementation: where the spec
leaves a point open, the choice made is commented with "spec:".

    client = NegoClient("tcp://127.0.0.1:5555")
    client.init(max_attempts=5, timeout_s=30)      # -> the RESPONSE_PROTOCOL_INIT Message
    client.request_offer(pending=1)
    offer = client.expect("nego.offer")
    ...
Runs with Debian's python3-zmq and python3-msgpack (use /usr/bin/python3). As a program it plays
one negotiation against an iHypervisor and prints every message it receives:

    /usr/bin/python3 nego_client.py tcp://127.0.0.1:5555 --jobs 1:2,2:1
"""
import os
import select
import signal
import subprocess
import tempfile
import time

import msgpack
import zmq

VERSION = 1

# §4: the wire names of the messages.
INIT = "nego.init"
INIT_RESPONSE = "nego.init_response"
FINALIZE = "nego.finalize"
FINALIZE_RESPONSE = "nego.finalize_response"
REQUEST_OFFER = "nego.request_offer"
OFFER = "nego.offer"
START = "nego.start"
START_RESPONSE = "nego.start_response"
OFFER_RESPONSE = "nego.offer_response"
END = "nego.end"
END_RESPONSE = "nego.end_response"
STATUS = "nego.status"
URGENT = "nego.urgent"
URGENT_RESPONSE = "nego.urgent_response"


class NegoTimeout(AssertionError):
    """No message arrived in time (an AssertionError, so unittest reports it as a failure)."""


class Message:
    """One received envelope: a message of §4, or an error reply (§2)."""

    def __init__(self, raw):
        self.raw = raw
        self.type = raw.get("type")
        self.seq = raw.get("seq")
        self.v = raw.get("v")
        self.body = raw.get("body") or {}
        self.ok = raw.get("ok")
        self.error = raw.get("error") or {}
        self.arrived = time.monotonic()

    @property
    def is_error(self):
        return self.ok is False

    @property
    def code(self):
        return self.error.get("code")

    def __getitem__(self, key):
        return self.body[key]

    def get(self, key, default=None):
        return self.body.get(key, default)

    def __repr__(self):
        return "Message(%r)" % (self.raw,)


def encode(msg_type, seq, body, v=VERSION):
    """§2: the envelope {v, type, seq, body}, msgpack with str keys."""
    return msgpack.packb({"v": v, "type": msg_type, "seq": seq, "body": body}, use_bin_type=True)


def decode(data):
    """Reads one frame; a frame that is not one msgpack map raises ValueError."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(data)
    objs = list(unpacker)
    if len(objs) != 1 or not isinstance(objs[0], dict):
        raise ValueError("not one msgpack map: %r" % (data[:64],))
    return Message(objs[0])


def placement(job, node, cores):
    return {"job": job, "node": node, "cores": list(cores)}


def offered_cores(offer_body):
    """[(node, core)] of a RESOURCE_OFFER body's Offer, in the offer's order."""
    out = []
    for res in offer_body["offer"]["resources"]:
        for sock in res["sockets"]:
            for core in sock["cores"]:
                out.append((res["node"], core))
    return out


def map_jobs(offer_body, jobs):
    """A mapping of jobs onto an offer: jobs is [(job id, cores wanted)], cores taken in order.

    Returns a list of Placements (one per job and node), or raises ValueError when the offer has
    too few cores.
    """
    free = offered_cores(offer_body)
    mapping = []
    for job, want in jobs:
        if want > len(free):
            raise ValueError("offer has %d free cores, job %d wants %d" % (len(free), job, want))
        taken, free = free[:want], free[want:]
        by_node = {}
        for node, core in taken:
            by_node.setdefault(node, []).append(core)
        mapping.extend(placement(job, node, cores) for node, cores in by_node.items())
    return mapping


class NegoClient:
    """S's side of one session: a DEALER connected to H's ROUTER (§2)."""

    def __init__(self, endpoint, identity=None, default_timeout=5.0):
        self.ctx = zmq.Context.instance()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        # A fresh identity per client: H serves one session per identity (§2). ZeroMQ reserves
        # identities starting with a zero byte.
        self.sock.setsockopt(zmq.IDENTITY, identity or b"S" + os.urandom(8).hex().encode())
        self.sock.connect(endpoint)
        self.seq = 0
        self.default_timeout = default_timeout
        self.status_reports = []  # STATUS_REPORTs skipped by expect()
        self.skipped = []  # messages skipped by expect_error()
        self.received = []  # every message, in arrival order, for failure messages
        self.peer_seq = None
        self.seq_violations = []  # H's seq not increasing by one (§2)

    def close(self):
        self.sock.close(0)

    # -- the envelope ------------------------------------------------------------------------
    def send(self, msg_type, body=None, v=VERSION, seq=None):
        """Sends one message; returns its seq. spec: §2 does not say where seq starts: 1."""
        if seq is None:
            self.seq += 1
            seq = self.seq
        self.sock.send(encode(msg_type, seq, body if body is not None else {}, v=v))
        return seq

    def send_raw(self, data):
        self.sock.send(data)

    def recv(self, timeout=None):
        """The next message, or NegoTimeout after timeout seconds."""
        timeout = self.default_timeout if timeout is None else timeout
        if not self.sock.poll(int(timeout * 1000), zmq.POLLIN):
            raise NegoTimeout("no message from the iHypervisor within %.1f s (last received: %r)"
                              % (timeout, self.received[-3:]))
        msg = decode(self.sock.recv())
        self.received.append(msg)
        if not msg.is_error:
            if msg.type == INIT_RESPONSE:
                self.peer_seq = None  # spec: a new session may restart H's counter
            if self.peer_seq is not None and msg.seq != self.peer_seq + 1:
                self.seq_violations.append((self.peer_seq, msg))
            self.peer_seq = msg.seq
        return msg

    def expect(self, types=None, timeout=None, keep_status=False):
        """The next message that is not a STATUS_REPORT (kept in status_reports), checked to be
        of one of `types` (a str or a tuple) unless None."""
        deadline = time.monotonic() + (self.default_timeout if timeout is None else timeout)
        while True:
            msg = self.recv(max(0.0, deadline - time.monotonic()))
            if msg.type == STATUS and not msg.is_error and not keep_status:
                self.status_reports.append(msg)
                continue
            if types is not None:
                wanted = (types,) if isinstance(types, str) else tuple(types)
                if msg.type not in wanted or msg.is_error:
                    raise AssertionError("expected %s, got %r" % (" or ".join(wanted), msg))
            return msg

    def expect_error(self, code, seq, msg_type=None, timeout=None, skip=()):
        """The error reply to message `seq`, with `code` (§2: it repeats the type and seq).

        Messages of the types in `skip` arriving first are kept in `skipped`."""
        while True:
            msg = self.expect(timeout=timeout)
            if msg.is_error or msg.type not in skip:
                break
            self.skipped.append(msg)
        if not msg.is_error:
            raise AssertionError("expected error %s for seq %d, got %r" % (code, seq, msg))
        if msg.code != code or msg.seq != seq or (msg_type is not None and msg.type != msg_type):
            raise AssertionError("expected error %s for %s seq %d, got %r"
                                 % (code, msg_type, seq, msg))
        return msg

    def expect_silence(self, seconds):
        """Asserts H sends nothing but STATUS_REPORTs for `seconds`."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                msg = self.expect(timeout=left)
            except NegoTimeout:
                return
            raise AssertionError("expected nothing from the iHypervisor, got %r" % (msg,))

    def collect_status(self, seconds):
        """The STATUS_REPORTs arriving in the next `seconds`; any other message fails."""
        deadline = time.monotonic() + seconds
        out = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return out
            try:
                msg = self.recv(left)
            except NegoTimeout:
                return out
            if msg.type != STATUS or msg.is_error:
                raise AssertionError("expected only STATUS_REPORTs, got %r" % (msg,))
            out.append(msg)

    # -- §4's messages from S ---------------------------------------------------------------
    def send_init(self, version=VERSION, max_attempts=10, timeout_s=30, status_interval_s=0,
                  name="nego_client.py"):
        return self.send(INIT, {"version": version, "max_attempts": max_attempts,
                                "timeout_s": timeout_s, "status_interval_s": status_interval_s,
                                "name": name})

    def init(self, **kw):
        """PROTOCOL_INIT and its RESPONSE_PROTOCOL_INIT."""
        self.send_init(**kw)
        return self.expect(INIT_RESPONSE)

    def finalize(self, reason="done"):
        return self.send(FINALIZE, {"reason": reason})

    def finalize_response(self):
        return self.send(FINALIZE_RESPONSE, {})

    def request_offer(self, pending=1):
        return self.send(REQUEST_OFFER, {"pending": pending})

    def start(self, txn):
        return self.send(START, {"txn": txn})

    def answer(self, txn, attempt, accepted=True, mapping=(), reason=None):
        body = {"txn": txn, "attempt": attempt, "accepted": accepted, "mapping": list(mapping)}
        if reason is not None:
            body["reason"] = reason
        return self.send(OFFER_RESPONSE, body)

    def end(self, txn, outcome, mapping=(), reason=None):
        body = {"txn": txn, "outcome": outcome, "mapping": list(mapping)}
        if reason is not None:
            body["reason"] = reason
        return self.send(END, body)

    def end_response(self, txn):
        return self.send(END_RESPONSE, {"txn": txn})

    def urgent(self, job, cores, nodes=0):
        return self.send(URGENT, {"job": job, "cores": cores, "nodes": nodes})

    # -- sequences ---------------------------------------------------------------------------
    def open_transaction(self, pending=1):
        """REQUEST_RESOURCE_OFFER, the first offer, NEGOTIATION_START, and H's acceptance.

        Returns the offer (attempt 1)."""
        self.request_offer(pending)
        offer = self.expect(OFFER)
        self.start(offer["txn"])
        resp = self.expect(START_RESPONSE)
        if resp["txn"] != offer["txn"] or resp["accepted"] is not True:
            raise AssertionError("NEGOTIATION_START of txn %d not accepted: %r"
                                 % (offer["txn"], resp))
        return offer


class Peer:
    """A negotiation_peer process (the iHypervisor), started with its command-line options."""

    def __init__(self, binary, *args, startup_timeout=15.0):
        self.stderr = tempfile.TemporaryFile()
        self.args = [binary, "--bind", "tcp://127.0.0.1:*", *args]
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self.stderr)
        # Its first stdout line names the endpoint it bound.
        ready, _, _ = select.select([self.proc.stdout], [], [], startup_timeout)
        line = self.proc.stdout.readline().decode().strip() if ready else ""
        if not line.startswith("listening "):
            self.stop()
            raise AssertionError("%s did not print 'listening <endpoint>' (got %r); stderr:\n%s"
                                 % (" ".join(self.args), line, self.log()))
        self.endpoint = line.split(" ", 1)[1]

    def log(self):
        if self.stderr.closed:
            return "(stopped)"
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        """SIGTERM, then the exit status (None when it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        self.proc.stdout.close()
        self.stderr.close()
        return self.proc.returncode


def main():
    """One negotiation: init, request an offer, map the jobs onto each offer until H agrees."""
    import argparse
    import json

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("endpoint", help="the iHypervisor's ROUTER endpoint")
    ap.add_argument("--jobs", default="1:1", help="JOB:CORES,... to map (default 1:1)")
    ap.add_argument("--max-attempts", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each message")
    opts = ap.parse_args()
    jobs = [tuple(int(x) for x in j.split(":")) for j in opts.jobs.split(",")]

    client = NegoClient(opts.endpoint, default_timeout=opts.timeout)

    def show(msg):
        print(json.dumps(msg.raw, default=repr), flush=True)
        return msg

    client.send_init(max_attempts=opts.max_attempts)
    show(client.expect(INIT_RESPONSE))
    client.request_offer(pending=len(jobs))
    offer = show(client.expect(OFFER))
    client.start(offer["txn"])
    show(client.expect(START_RESPONSE))
    while True:
        client.answer(offer["txn"], offer["attempt"], True, map_jobs(offer.body, jobs))
        msg = show(client.expect((OFFER, END)))
        if msg.type == END:
            break
        offer = msg
    if msg["outcome"] == "agreed":
        client.end_response(msg["txn"])  # the jobs are handed over (§6)
    client.finalize("done")  # abandons the offer H may have sent meanwhile
    while show(client.expect()).type != FINALIZE_RESPONSE:
        pass
    client.close()
    return 0 if msg["outcome"] == "agreed" else 1


if __name__ == "__main__":
    raise SystemExit(main())
