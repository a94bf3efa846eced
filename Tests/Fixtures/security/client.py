#!/usr/bin/python3
"""A peer of locationd for the trust tests (Tests/EndToEndTests/DaemonTrustTests.swift).

    client.py SOCKET ROLE [MESSAGE...]
        Connects, says hello with ROLE, sends each MESSAGE (a JSON object), and prints every
        line the daemon sends until it closes the connection or a reply to the last ping arrives
        (a ping with id 999 is sent after the messages).

    client.py --exec-after-connect SOCKET VICTIM
        The exec-after-connect attack (issue 14, F2): a child connects on a socket this process
        shares, then execs VICTIM (keeping the socket); once the child is VICTIM, this process
        (not the one that connected) says hello as an app and prints the daemon's answer.

Written for this project; standard library only.
"""
import json
import os
import signal
import socket
import sys


def converse(sock, role, messages):
    stream = sock.makefile("rwb")
    for message in [{"type": "hello", "version": 1, "role": role}] + messages + [
        {"type": "ping", "id": 999}
    ]:
        stream.write((json.dumps(message) + "\n").encode())
    stream.flush()
    for line in stream:
        sys.stdout.write(line.decode())
        sys.stdout.flush()
        answer = json.loads(line)
        if answer.get("type") == "reply" and answer.get("id") == 999:
            break


def exec_after_connect(path, victim):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    os.set_inheritable(sock.fileno(), True)
    child = os.fork()
    if child == 0:
        sock.connect(path)
        # Keep only the socket and the standard streams: any other descriptor this process was
        # started with (such as the one by which Foundation's Process learns that its child has
        # ended) would otherwise live on in the victim and outlast this process.
        os.closerange(3, sock.fileno())
        os.closerange(sock.fileno() + 1, os.sysconf("SC_OPEN_MAX"))
        os.execv(victim, [victim, "60"])
    # Wait until the child runs the victim's executable (bounded: about 10 s).
    for _ in range(10000):
        try:
            if os.readlink("/proc/%d/exe" % child) == victim:
                break
        except OSError:
            pass
        os.sched_yield()
    print(json.dumps({"type": "attack", "child": child}), flush=True)
    # A test that is done sends SIGTERM: the victim goes with this process.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(1))
    try:
        converse(sock, "app", [])
    finally:
        os.kill(child, 9)


if __name__ == "__main__":
    if sys.argv[1] == "--exec-after-connect":
        exec_after_connect(sys.argv[2], sys.argv[3])
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(sys.argv[1])
        converse(sock, sys.argv[2], [json.loads(text) for text in sys.argv[3:]])
