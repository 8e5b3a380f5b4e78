#!/usr/bin/env python3
"""Fills deploy/nginx.conf.template (the one nginx configuration, shared by the loopback test and compose.yaml).
   render-nginx.py LISTEN CACHE_DIR PID_FILE host:port [host:port ...]   > nginx.conf"""
import os, sys


def render(listen, cache_dir, pid_file, replicas, template=None):
    text = template or open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "nginx.conf.template")).read()
    servers = "\n        ".join(f"server {r} max_fails=2 fail_timeout=2s;" for r in replicas)
    return (text.replace("${LISTEN}", listen).replace("${CACHE_DIR}", cache_dir).replace("${PID_FILE}", pid_file)
            .replace("${UPSTREAMS}", servers))


if __name__ == "__main__":
    if len(sys.argv) < 5:
        raise SystemExit(__doc__)
    sys.stdout.write(render(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]))
