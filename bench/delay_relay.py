#!/usr/bin/env python3
"""A TCP relay that adds latency: the kernel here has no netem.

usage: delay_relay.py --listen PORT --to PORT [--delay-ms 20] [--log FILE]

Every connection to 127.0.0.1:LISTEN is relayed to 127.0.0.1:TO.  The
first byte the server sends after each request from the client (the
start of every response, and of every TLS handshake flight) is held
DELAY ms, so each request/response round trip costs DELAY more, as on a
link with that round-trip time.  --log counts connections and responses.
"""
import argparse
import asyncio


class Stats:
    connections = 0
    responses = 0


async def pipe(reader, writer, state, delay=None):
    """Client to server (delay None: marks a request asked) or server to
    client (holds the first byte after each request delay seconds)."""
    try:
        while data := await reader.read(65536):
            if delay is None:
                state["asked"] = True
            elif state["asked"]:
                state["asked"] = False
                Stats.responses += 1
                await asyncio.sleep(delay)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--to", type=int, required=True)
    ap.add_argument("--delay-ms", type=float, default=20.0)
    ap.add_argument("--log")
    a = ap.parse_args()
    delay = a.delay_ms / 1000.0

    async def handle(creader, cwriter):
        Stats.connections += 1
        try:
            sreader, swriter = await asyncio.open_connection("127.0.0.1", a.to)
        except OSError:
            cwriter.close()
            return
        state = {"asked": False}
        await asyncio.gather(pipe(creader, swriter, state),
                             pipe(sreader, cwriter, state, delay))

    async def report():
        while a.log:
            await asyncio.sleep(0.2)
            with open(a.log, "w") as f:
                f.write("%d connections %d responses\n" % (Stats.connections, Stats.responses))

    server = await asyncio.start_server(handle, "127.0.0.1", a.listen)
    async with server:
        await asyncio.gather(server.serve_forever(), report())


if __name__ == "__main__":
    asyncio.run(main())
