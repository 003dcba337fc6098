"""Online Boutique's own load, with a new connection for every request.

Chaos Mesh's HTTPChaos proxies only TCP connections opened after it is injected, and the
stock load generator's users (Locust ``FastHttpUser``) keep one connection alive from
spawn on, so no user request would ever meet an HTTP fault. This file runs the image's
own locustfile unchanged (tasks, weights, waits) and adds one header to every request:
``Connection: close``. Go's net/http server then closes each connection after its reply,
so every request opens a new one, which kube-proxy spreads over the ready frontend pods,
as requests from many short visits would be.

Mounted from a ConfigMap and selected with ``LOCUST_LOCUSTFILE`` by ``deploy/kind``; the
image's file stays where it is (``/loadgen/locustfile.py``, or ``R2ACT_UPSTREAM_LOCUSTFILE``).
"""

import importlib.util
import os
import sys

UPSTREAM = os.environ.get("R2ACT_UPSTREAM_LOCUSTFILE", "/loadgen/locustfile.py")

_spec = importlib.util.spec_from_file_location("onlineboutique_locustfile", UPSTREAM)
if _spec is None or _spec.loader is None:
    sys.exit(f"r2act_load: cannot load the load generator's locustfile {UPSTREAM}")
_upstream = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_upstream)

# Locust runs the user classes it finds in this module: exactly the image's one.
WebsiteUser = _upstream.WebsiteUser
WebsiteUser.default_headers = {**(WebsiteUser.default_headers or {}), "Connection": "close"}
