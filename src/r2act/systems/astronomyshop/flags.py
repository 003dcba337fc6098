"""The Astronomy Shop's built-in faults: its flagd feature flags, per application version.

Every flag of ``src/flagd/demo.flagd.json`` (2.2.0; the chart 0.40.10 ships the same file
as ``flagd/demo.flagd.json``) with what its code path does and a realizability verdict read
from that code path, each claim citing the pinned source line (paths under
``shared/reference``). Keyed by application version because the flags change between
releases (3.0.0 drops three and adds three): a second version is a second profile here,
not an edit of this one. Evidence: ``docs/faults.md``, "Astronomy Shop 2.2.0".
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from r2act.schema import Intensity
from r2act.systems.astronomyshop.texts import T
from r2act.systems.flags import FeatureFlag, FlagEffect, FlagStatus, FlagVariant, Source

_APP = "opentelemetry-demo-2.2.0/src/"
_CHART = "opentelemetry-demo-chart-0.40.10/"
_EVIDENCE = "docs/faults.md#astronomy-shop-220-per-flag-realizability"

_AD = _APP + "ad/src/main/java/oteldemo/AdService.java"
_CPU = _APP + "ad/src/main/java/oteldemo/problempattern/CPULoad.java"
_GC = _APP + "ad/src/main/java/oteldemo/problempattern/GarbageCollectionTrigger.java"
_CART = _APP + "cart/src/services/CartService.cs"
_CART_MAIN = _APP + "cart/src/Program.cs"
_CART_STORE = _APP + "cart/src/cartstore/ValkeyCartStore.cs"
_CART_HEALTH = _APP + "cart/src/services/HealthCheckService.cs"
_CHECKOUT = _APP + "checkout/main.go"
_CATALOG = _APP + "product-catalog/main.go"
_LOCUST = _APP + "load-generator/locustfile.py"
_REVIEWS = _APP + "product-reviews/product_reviews_server.py"
_LLM = _APP + "llm/app.py"
_RECO = _APP + "recommendation/recommendation_server.py"
_FE_API = _APP + "frontend/utils/telemetry/InstrumentationMiddleware.ts"

_BOOL = (FlagVariant("on", True), FlagVariant("off", False))
_ON = ((Intensity.MODERATE, "on"), (Intensity.SEVERE, "on"))


def _bool_flag(
    key: str,
    service: str,
    *,
    readers: tuple[str, ...],
    effect: FlagEffect,
    realizable: bool,
    user_visible: bool,
    verdict: str,
    sources: tuple[Source, ...],
    variants: tuple[FlagVariant, ...] = _BOOL,
    operation: str | None = None,
    callee: str | None = None,
    share: float | None = None,
    error: str | None = None,
    status: FlagStatus | None = None,
) -> FeatureFlag:
    """A boolean flag: ``off`` is its default and ``on`` serves both intensities."""
    return FeatureFlag(
        key=key,
        service=service,
        readers=readers,
        variants=variants,
        off="off",
        intensities=_ON,
        effect=effect,
        realizable=realizable,
        user_visible=user_visible,
        verdict=verdict,
        sources=sources,
        evidence=_EVIDENCE,
        operation=operation,
        callee=callee,
        share=share,
        error=error,
        status=status,
    )


_FLAGS_2_2_0: tuple[FeatureFlag, ...] = (
    _bool_flag(
        "llmInaccurateResponse",
        "llm",
        readers=("llm", "product-reviews"),
        variants=(FlagVariant("off", False), FlagVariant("on", True)),
        effect=FlagEffect.NONE,
        operation="AskProductAIAssistant",
        realizable=False,
        user_visible=False,
        verdict=(
            "The mock LLM returns a pre-written wrong summary for one product, with status "
            "200 and no extra latency, so no metric, error or user failure moves; the only "
            "lines that change are info lines naming the flag itself (a label leak, not a "
            "symptom)."
        ),
        sources=(
            Source(_LLM, 63, 'check_feature_flag("llmInaccurateResponse")'),
            Source(_LLM, 65, 'product_id == "L9ECAV7KIM"'),
            Source(_REVIEWS, 269, 'check_feature_flag("llmInaccurateResponse")'),
            Source(_REVIEWS, 272, 'request_product_id == "L9ECAV7KIM"'),
        ),
    ),
    _bool_flag(
        "llmRateLimitError",
        "product-reviews",
        readers=("product-reviews",),
        variants=(FlagVariant("off", False), FlagVariant("on", True)),
        effect=FlagEffect.CALL_ERRORS,
        operation="AskProductAIAssistant",
        share=0.5,
        error="429 from the mock LLM, caught and answered with an apology",
        # llm/app.py L120-L130: the mock's rate-limit model answers 429 with this message.
        status=FlagStatus("429", T("as.llm.rate_limit")(), via="llm"),
        realizable=True,
        user_visible=False,
        verdict=(
            "Half of the AI-assistant calls go to the mock LLM's rate-limit model, get a "
            "429 and log 'Caught Exception' at error level in product-reviews, which answers "
            "with an apology instead of failing: the signal is product-reviews' error lines, "
            "users see no failed request."
        ),
        sources=(
            Source(_REVIEWS, 164, 'check_feature_flag("llmRateLimitError")'),
            Source(_REVIEWS, 170, "random_number < 0.5"),
            Source(_REVIEWS, 189, 'model="astronomy-llm-rate-limit"'),
            Source(_REVIEWS, 195, 'logger.error(f"Caught Exception: {e}")'),
            Source(_LLM, 120, 'model.endswith("rate-limit")'),
            Source(_LLM, 130, "429"),
        ),
    ),
    _bool_flag(
        "productCatalogFailure",
        "product-catalog",
        readers=("product-catalog",),
        effect=FlagEffect.CALL_ERRORS,
        operation="GetProduct",
        share=0.1,
        error="codes.Internal: Error: Product Catalog Fail Feature Flag Enabled",
        status=FlagStatus("Internal", T("as.pc.e.flag")()),  # main.go L440-L443
        realizable=True,
        user_visible=True,
        verdict=(
            "GetProduct fails with Internal for product OLJCESPC7Z only, one of the load "
            "generator's ten product ids, and the frontend's API handlers do not catch it: "
            "about a tenth of product-page and add-to-cart requests return 500."
        ),
        sources=(
            Source(_CATALOG, 486, 'id != "OLJCESPC7Z"'),
            Source(_CATALOG, 492, '"productCatalogFailure"'),
            Source(_CATALOG, 440, "Product Catalog Fail Feature Flag Enabled"),
            Source(_CATALOG, 443, "codes.Internal"),
            Source(_LOCUST, 106, '"OLJCESPC7Z"'),
            Source(_FE_API, 26, "httpStatus = 500"),
        ),
    ),
    _bool_flag(
        "recommendationCacheFailure",
        "recommendation",
        readers=("recommendation",),
        effect=FlagEffect.CALL_ERRORS,
        operation="ListRecommendations",
        share=0.5,
        error="GetProduct called with an Empty request (no product id)",
        # The Empty message reads as a GetProductRequest with no id: product-catalog's
        # look-up fails NotFound (main.go L446-L451), recommendation raises on it.
        status=FlagStatus("NotFound", T("as.pc.e.not_found")(""), via="product-catalog"),
        realizable=True,
        user_visible=True,
        verdict=(
            "In 2.2.0 the cache-miss branch (half the calls, and the first) calls GetProduct "
            "with an Empty message and fails before it extends cached_ids, so the flag gives "
            "failed ListRecommendations calls (500 on /api/recommendations), not the intended "
            "memory leak; the hits return an empty list."
        ),
        sources=(
            Source(_RECO, 78, 'check_feature_flag("recommendationCacheFailure")'),
            Source(_RECO, 80, "random.random() < 0.5 or first_run"),
            Source(_RECO, 84, "product_catalog_stub.GetProduct(demo_pb2.Empty())"),
            Source(_RECO, 86, "cached_ids = cached_ids + response_ids"),
            Source(_CATALOG, 451, "codes.NotFound"),
        ),
    ),
    _bool_flag(
        "adManualGc",
        "ad",
        readers=("ad",),
        effect=FlagEffect.GC_PAUSES,
        operation="GetAds",
        realizable=True,
        user_visible=True,
        verdict=(
            "Every GetAds call builds a new GarbageCollectionTrigger, whose 10 s guard starts "
            "from zero, so each call fills the heap to 90% and runs ten full collections: "
            "ad's CPU and GetAds latency rise, with a warning line per call."
        ),
        sources=(
            Source(_AD, 136, '"adManualGc"'),
            Source(_AD, 209, "AD_MANUAL_GC_FEATURE_FLAG"),
            Source(_AD, 211, "new GarbageCollectionTrigger()"),
            Source(_GC, 44, "lastGC > gc_delay"),
            Source(_GC, 52, "new Entry()"),
            Source(_GC, 55, "System.gc()"),
        ),
    ),
    _bool_flag(
        "adHighCpu",
        "ad",
        readers=("ad",),
        effect=FlagEffect.CPU_BURN,
        operation="GetAds",
        realizable=True,
        user_visible=True,
        verdict=(
            "The first GetAds call with the flag on starts four busy threads (Math.log in a "
            "loop) that run until a call sees it off; the chart sets no CPU limit, so ad's "
            "container CPU (cAdvisor) climbs towards four cores and slows the node."
        ),
        sources=(
            Source(_AD, 137, '"adHighCpu"'),
            Source(_AD, 172, "cpuload.execute(ffClient.getBooleanValue(AD_HIGH_CPU_FEATURE_FLAG"),
            Source(_CPU, 23, "THREAD_COUNT = 4"),
            Source(_CPU, 55, "stopWorkers();"),
            Source(_CPU, 102, "Math.log(System.currentTimeMillis())"),
        ),
    ),
    _bool_flag(
        "adFailure",
        "ad",
        readers=("ad",),
        effect=FlagEffect.CALL_ERRORS,
        operation="GetAds",
        share=0.1,
        error="UNAVAILABLE",
        status=FlagStatus("Unavailable", ""),  # AdService.java L206: Status.UNAVAILABLE, no text
        realizable=True,
        user_visible=True,
        verdict=(
            "About one GetAds call in ten throws UNAVAILABLE (ad logs 'GetAds Failed'), and "
            "the frontend's /api/data handler does not catch it: a tenth of the load "
            "generator's get_ads requests return 500."
        ),
        sources=(
            Source(_AD, 135, '"adFailure"'),
            Source(_AD, 205, "random.nextInt(10) == 0"),
            Source(_AD, 206, "Status.UNAVAILABLE"),
            Source(_AD, 222, "GetAds Failed with status"),
            Source(_APP + "frontend/pages/api/data.ts", 15, "AdGateway.listAds"),
            Source(_FE_API, 26, "httpStatus = 500"),
        ),
    ),
    FeatureFlag(
        key="kafkaQueueProblems",
        service="fraud-detection",
        readers=("checkout", "fraud-detection"),
        variants=(FlagVariant("on", 100), FlagVariant("off", 0)),
        off="off",
        intensities=_ON,
        effect=FlagEffect.QUEUE_FLOOD,
        operation="orders topic",
        realizable=False,
        user_visible=False,
        verdict=(
            "Checkout sends 100 extra copies of each order message and fraud-detection sleeps "
            "1 s per record, so the symptom is consumer lag, which needs Kafka's own metrics "
            "that r2act does not collect (cAdvisor shows fraud-detection idler, not busier; "
            "users' orders succeed); the lines that change name the flag itself."
        ),
        sources=(
            Source(_CHECKOUT, 664, 'cs.getIntFeatureFlag(ctx, "kafkaQueueProblems")'),
            Source(_CHECKOUT, 669, "cs.KafkaProducerClient.Input() <- &msg"),
            Source(
                _APP + "fraud-detection/src/main/kotlin/frauddetection/main.kt",
                60,
                'getFeatureFlagValue("kafkaQueueProblems") > 0',
            ),
            Source(
                _APP + "fraud-detection/src/main/kotlin/frauddetection/main.kt",
                62,
                "Thread.sleep(1000)",
            ),
        ),
        evidence=_EVIDENCE,
    ),
    _bool_flag(
        "cartFailure",
        "cart",
        readers=("cart",),
        effect=FlagEffect.CALL_ERRORS,
        operation="EmptyCart",
        error="FailedPrecondition: Can't access cart storage",
        # ValkeyCartStore.cs L98-L101 (abortConnect=false, L49: Connect returns unconnected),
        # caught and rethrown as FailedPrecondition at L201-L203 (the exception's first line).
        status=FlagStatus(
            "FailedPrecondition",
            T("as.ca.storage")(T("as.dotnet.app_exception")(T("as.ca.e.not_connected")())),
        ),
        realizable=True,
        user_visible=False,
        verdict=(
            "Every EmptyCart goes to a second cart store at badhost:1234, logs 'Wasn't able "
            "to connect to redis' and fails, but checkout discards that error after the "
            "order is placed: the signal is cart's error lines (and carts never emptied), "
            "users' orders still succeed."
        ),
        sources=(
            Source(_CART, 83, '"cartFailure"'),
            Source(_CART, 85, "_badCartStore.EmptyCartAsync"),
            Source(_CART_MAIN, 60, '"badhost:1234"'),
            Source(_CART_STORE, 98, "Wasn't able to connect to redis"),
            Source(_CART_STORE, 203, "Can't access cart storage"),
            Source(_CHECKOUT, 349, "_ = cs.emptyUserCart(ctx, req.UserId)"),
        ),
    ),
    FeatureFlag(
        key="paymentFailure",
        service="payment",
        readers=("payment",),
        variants=(
            FlagVariant("100%", 1),
            FlagVariant("90%", 0.95),
            FlagVariant("75%", 0.75),
            FlagVariant("50%", 0.5),
            FlagVariant("25%", 0.25),
            FlagVariant("10%", 0.1),
            FlagVariant("off", 0),
        ),
        off="off",
        intensities=((Intensity.MODERATE, "50%"), (Intensity.SEVERE, "100%")),
        effect=FlagEffect.CALL_ERRORS,
        operation="Charge",
        error="Payment request failed. Invalid token. app.loyalty.level=gold",
        # charge.js L37 throws a plain Error, which index.js L29 passes to the callback:
        # grpc-js answers a status-less error with UNKNOWN and the error's message.
        status=FlagStatus("Unknown", T("as.pa.e.invalid_token")()),
        realizable=True,
        user_visible=True,
        verdict=(
            "Charge throws 'Invalid token' with the variant's probability (the '90%' variant "
            "is 0.95), checkout returns 'failed to charge card' and the user's checkout "
            "fails: the load generator's checkout requests fail at that share."
        ),
        sources=(
            Source(_APP + "payment/charge.js", 29, 'getNumberValue("paymentFailure", 0)'),
            Source(_APP + "payment/charge.js", 33, "Math.random() < numberVariant"),
            Source(_APP + "payment/charge.js", 37, "Invalid token. app.loyalty.level=gold"),
            Source(_CHECKOUT, 331, "failed to charge card"),
        ),
        evidence=_EVIDENCE,
    ),
    _bool_flag(
        "paymentUnreachable",
        "checkout",
        readers=("checkout",),
        effect=FlagEffect.DIAL_FAILURE,
        operation="Charge",
        callee="payment",
        error="dial to badAddress:50051 fails (name resolution)",
        realizable=True,
        user_visible=True,
        verdict=(
            "Checkout builds a client for badAddress:50051 instead of payment's, so every "
            "checkout fails with 'failed to charge card' while payment receives nothing: the "
            "fault is in checkout's code path, so checkout is labelled."
        ),
        sources=(
            Source(_CHECKOUT, 537, 'cs.isFeatureFlagEnabled(ctx, "paymentUnreachable")'),
            Source(_CHECKOUT, 538, '"badAddress:50051"'),
            Source(_CHECKOUT, 539, "mustCreateClient(badAddress)"),
            Source(_CHECKOUT, 331, "failed to charge card"),
        ),
    ),
    FeatureFlag(
        key="loadGeneratorFloodHomepage",
        service="load-generator",
        readers=("load-generator",),
        variants=(FlagVariant("on", 100), FlagVariant("off", 0)),
        off="off",
        intensities=_ON,
        effect=FlagEffect.LOAD_SURGE,
        operation="GET /",
        realizable=False,
        user_visible=True,
        verdict=(
            "Its reader is the load generator (task flood_home, weight 5, GETs / 100 times), "
            "so it changes the workload, not a service: no application service is at fault, "
            "and scaling the overloaded front out is as fair an answer as reverting."
        ),
        sources=(
            Source(_LOCUST, 218, "@task(5)"),
            Source(_LOCUST, 220, 'get_flagd_value("loadGeneratorFloodHomepage")'),
            Source(_LOCUST, 225, 'self.client.get("/")'),
        ),
        evidence=_EVIDENCE,
    ),
    FeatureFlag(
        key="imageSlowLoad",
        service="frontend",
        readers=("frontend",),
        variants=(
            FlagVariant("10sec", 10000),
            FlagVariant("5sec", 5000),
            FlagVariant("off", 0),
        ),
        off="off",
        intensities=((Intensity.MODERATE, "5sec"), (Intensity.SEVERE, "10sec")),
        effect=FlagEffect.REQUEST_DELAY,
        operation="GET /images/products/*",
        realizable=False,
        user_visible=False,
        verdict=(
            "The flag is read by the frontend's browser code, which asks Envoy for the delay "
            "in a request header on image fetches; only the Playwright browser user makes "
            "such requests, so with browser traffic off (r2act's deployment; the chart's "
            "default is on) no request carries the header."
        ),
        sources=(
            Source(
                _APP + "frontend/components/ProductCard/ProductCard.tsx",
                32,
                "useNumberFlagValue('imageSlowLoad', 0)",
            ),
            Source(
                _APP + "frontend/components/ProductCard/ProductCard.tsx",
                37,
                "x-envoy-fault-delay-request",
            ),
            Source(_APP + "frontend-proxy/envoy.tmpl.yaml", 67, "envoy.filters.http.fault"),
            Source(_APP + "frontend-proxy/envoy.tmpl.yaml", 72, "header_delay: {}"),
            Source(_LOCUST, 237, "LOCUST_BROWSER_TRAFFIC_ENABLED"),
            Source(_CHART + "values.yaml", 520, "LOCUST_BROWSER_TRAFFIC_ENABLED"),
        ),
        evidence=_EVIDENCE,
    ),
    _bool_flag(
        "failedReadinessProbe",
        "cart",
        readers=("cart",),
        effect=FlagEffect.UNREADY,
        operation="grpc.health.v1.Health/Check",
        realizable=False,
        user_visible=False,
        verdict=(
            "Only cart's gRPC health service answers NOT_SERVING, and chart 0.40.10 gives "
            "cart no readinessProbe (nor any other component), so no kubelet asks and "
            "nothing changes; it becomes realizable once the deployment adds a gRPC "
            "readiness probe on cart."
        ),
        sources=(
            Source(_CART_HEALTH, 35, '"failedReadinessProbe"'),
            Source(_CART_HEALTH, 39, 'HealthCheckResult.Unhealthy("connection failed")'),
            Source(_CART_MAIN, 92, "AddCheck<readinessCheck>"),
            Source(_CHART + "values.yaml", 152, "#   readinessProbe: {}"),
        ),
    ),
    FeatureFlag(
        key="emailMemoryLeak",
        service="email",
        readers=("email",),
        variants=(
            FlagVariant("off", 0),
            FlagVariant("1x", 1),
            FlagVariant("10x", 10),
            FlagVariant("100x", 100),
            FlagVariant("1000x", 1000),
            FlagVariant("10000x", 10000),
        ),
        off="off",
        intensities=((Intensity.MODERATE, "1000x"), (Intensity.SEVERE, "10000x")),
        effect=FlagEffect.MEMORY_LEAK,
        operation="POST /send_order_confirmation",
        realizable=True,
        user_visible=False,
        verdict=(
            "Each confirmation mail is padded to about the variant's multiple of the "
            "template (1.9 kB) and kept by the test mailer, which is cleared only when the "
            "flag is below 1, so email's working set grows with every order until its "
            "100Mi limit kills it (OOMKilled, restarts)."
        ),
        sources=(
            Source(_APP + "email/email_server.rb", 67, 'flag_key: "emailMemoryLeak"'),
            Source(_APP + "email/email_server.rb", 71, "memory_leak_multiplier-1"),
            Source(_APP + "email/email_server.rb", 78, "via:      :test"),
            Source(_APP + "email/email_server.rb", 83, "memory_leak_multiplier < 1"),
            Source(_APP + "email/email_server.rb", 84, "Mail::TestMailer.deliveries.clear"),
        ),
        evidence=_EVIDENCE,
    ),
)

FLAGS: Mapping[str, tuple[FeatureFlag, ...]] = {"2.2.0": _FLAGS_2_2_0}
"""Application version -> its flags, in the flag file's order."""

FLAGS_2_2_0: Mapping[str, FeatureFlag] = MappingProxyType({f.key: f for f in _FLAGS_2_2_0})
"""The 2.2.0 flags by key, in the flag file's order: what ``System.flags`` takes."""


def flag(version: str, key: str) -> FeatureFlag:
    """One flag of one version; a one-line error naming what exists when it is not there."""
    if version not in FLAGS:
        raise KeyError(f"no flag profile for Astronomy Shop {version}; known: {sorted(FLAGS)}")
    for candidate in FLAGS[version]:
        if candidate.key == key:
            return candidate
    known = ", ".join(f.key for f in FLAGS[version])
    raise KeyError(f"Astronomy Shop {version} has no flag {key!r}; known: {known}")
