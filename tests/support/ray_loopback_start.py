"""`ray start ARGS...` with every node address kept at 127.0.0.1, for tests: Ray rewrites a loopback
`--node-ip-address` to the machine's network address, and its loopback-only switch refuses a second node, so this
runs Ray's own CLI with the address lookup answering 127.0.0.1 (tests stay on the loopback interface)."""
import sys

import ray._private.services as services

services.get_node_ip_address = lambda address=None: "127.0.0.1"

if __name__ == "__main__":
    from ray.scripts.scripts import main

    sys.argv = ["ray", *sys.argv[1:]]
    main()
