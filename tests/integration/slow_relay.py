#!/usr/bin/env python3
"""A TCP relay that slows what the server sends to a given rate.

usage: slow_relay.py --listen PORT --to PORT --rate BYTES_PER_SECOND

Every connection to 127.0.0.1:PORT is relayed to 127.0.0.1:TO (TLS and
all, bytes as they are); the server's bytes reach the client in slices of
at most a tenth of the rate, one slice each tenth of a second, so that a
download takes as long as on a link that slow (for progress to be seen).
"""
import argparse
import socket
import threading
import time


def forward(src, dst, rate):
    """Copy src to dst until src ends; at most rate bytes a second (None:
    as fast as they come)."""
    slice_size = max(1, rate // 10) if rate else 65536
    try:
        while True:
            data = src.recv(slice_size)
            if not data:
                break
            dst.sendall(data)
            if rate:
                time.sleep(len(data) / rate)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(listen_port, to_port, rate):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", listen_port))
    listener.listen(16)
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(("127.0.0.1", to_port))
        threading.Thread(target=forward, args=(client, server, None), daemon=True).start()
        threading.Thread(target=forward, args=(server, client, rate), daemon=True).start()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--to", type=int, required=True)
    ap.add_argument("--rate", type=int, required=True)
    args = ap.parse_args()
    serve(args.listen, args.to, args.rate)
