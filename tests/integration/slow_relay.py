#!/usr/bin/env python3
"""A TCP relay that slows what the server sends, or cuts it off.

usage: slow_relay.py --listen PORT --to PORT [--rate BYTES_PER_SECOND]
                     [--cut-after BYTES] [--stall-after BYTES [--gate FILE]]
                     [--log FILE]

Every connection to 127.0.0.1:PORT is relayed to 127.0.0.1:TO (TLS and
all, bytes as they are).  --rate: the server's bytes reach the client in
slices of at most a tenth of the rate, one slice each tenth of a second,
so that a download takes as long as on a link that slow (for progress to
be seen).  --cut-after: the first connection whose server sends more than
BYTES is closed once BYTES have gone through (a link that drops in the
middle of a download; later connections are left alone).  --stall-after:
once BYTES of the servers' have gone through, the connection carrying the
last of them sends nothing more (a server that stops answering) until
FILE exists (--gate), or for good.  --log: after
each connection, a line "connections N bytes M peak P" (the server's
bytes relayed so far, over all connections; the most connections that
were open at once).
"""
import argparse
import os
import socket
import threading
import time


class Stats:
    lock = threading.Lock()
    connections = 0
    open = 0            # connections open now
    peak = 0            # the most open at once
    sent = 0            # the servers' bytes relayed
    cut_left = None     # bytes until the cut, while it is still to come
    stall_left = None   # bytes until the stall, while it is still to come
    gate = None         # the file that ends the stall


def forward(src, dst, rate=None, log=None):
    """Copy src to dst until src ends; at most rate bytes a second (None:
    as fast as they come).  With log: the server's side, counted (and cut
    off, once)."""
    slice_size = max(1, rate // 10) if rate else 65536
    try:
        while True:
            data = src.recv(slice_size)
            if not data:
                break
            cut = False
            stall = None        # the bytes held back by a stall
            if log is not None:
                with Stats.lock:
                    if Stats.cut_left is not None:
                        cut = len(data) >= Stats.cut_left
                        data = data[:Stats.cut_left]
                        Stats.cut_left = None if cut else Stats.cut_left - len(data)
                    if Stats.stall_left is not None and len(data) >= Stats.stall_left:
                        data, stall = data[:Stats.stall_left], data[Stats.stall_left:]
                        Stats.stall_left = None
                    elif Stats.stall_left is not None:
                        Stats.stall_left -= len(data)
                    Stats.sent += len(data)
            dst.sendall(data)
            if cut:
                break
            if stall is not None:
                while not (Stats.gate and os.path.exists(Stats.gate)):
                    time.sleep(0.05)
                dst.sendall(stall)
                with Stats.lock:
                    Stats.sent += len(stall)
            if rate:
                time.sleep(len(data) / rate)
    except OSError:
        pass
    finally:
        if log is not None:
            with Stats.lock:
                Stats.connections += 1
                Stats.open -= 1
                if log:
                    with open(log, "a") as f:
                        f.write(f"connections {Stats.connections} bytes {Stats.sent} "
                                f"peak {Stats.peak}\n")
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(listen_port, to_port, rate, log):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen(16)
    while True:
        client, _ = listener.accept()
        with Stats.lock:
            Stats.open += 1
            Stats.peak = max(Stats.peak, Stats.open)
        server = socket.create_connection(("127.0.0.1", to_port))
        threading.Thread(target=forward, args=(client, server), daemon=True).start()
        threading.Thread(target=forward, args=(server, client, rate, log or ""),
                         daemon=True).start()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--to", type=int, required=True)
    ap.add_argument("--rate", type=int, default=0)
    ap.add_argument("--cut-after", type=int)
    ap.add_argument("--stall-after", type=int)
    ap.add_argument("--gate")
    ap.add_argument("--log")
    args = ap.parse_args()
    Stats.cut_left = args.cut_after
    Stats.stall_left = args.stall_after
    Stats.gate = args.gate
    serve(args.listen, args.to, args.rate or None, args.log)
