#!/usr/bin/env python3
"""Aggregate decode speed of a running `kiln serve` with N concurrent clients, over loopback HTTP.

    kiln serve --model 1b-q4_0.gguf --backend cpu --threads 2 --parallel 8 --port 8080 &
    python3 tests/tools/parallel_load.py http://127.0.0.1:8080 1,2,4,8 [max_tokens]

Each client sends one /v1/completions request of its own (a short prompt, its own seed, temperature
1 so that random weights do not stop at an end token) and all start together; the figure is the sum
of their completion tokens over the time from the first request sent to the last answer, which
includes the short prompts' prefill and HTTP. A benchmark, not a test: the standard library only.
"""
import json
import sys
import threading
import time
import urllib.request


def one_request(base, index, max_tokens, results):
    body = json.dumps({"model": "any", "prompt": f"Client {index} asks question number {index * 7}.",
                       "max_tokens": max_tokens, "temperature": 1, "seed": 100 + index}).encode()
    request = urllib.request.Request(base + "/v1/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=3600) as response:
        results[index] = json.load(response)["usage"]["completion_tokens"]


def run(base, clients, max_tokens):
    results = [0] * clients
    threads = [threading.Thread(target=one_request, args=(base, i, max_tokens, results)) for i in range(clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - start
    return sum(results), seconds


def main():
    base = sys.argv[1].rstrip("/")
    counts = [int(c) for c in sys.argv[2].split(",")]
    max_tokens = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    single = None
    for clients in counts:
        tokens, seconds = run(base, clients, max_tokens)
        rate = tokens / seconds
        single = rate if clients == 1 and single is None else single
        ratio = f" {rate / single:.2f}x one alone" if single and clients > 1 else ""
        print(f"{clients:2d} clients: {rate:8.2f} tokens/s together ({tokens} tokens in {seconds:.1f} s){ratio}",
              flush=True)


if __name__ == "__main__":
    main()
