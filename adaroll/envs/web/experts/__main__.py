"""``python -m adaroll.envs.web.experts``: the verification sweep (:func:`.sweep.main`)."""

import sys

from adaroll.envs.web.experts.sweep import main

if __name__ == "__main__":
    sys.exit(main())
