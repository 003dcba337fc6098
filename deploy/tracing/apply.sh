#!/usr/bin/env bash
# Traces for Online Boutique (issue 24): r2act's Jaeger (jaeger.yaml) and OpenTelemetry
# Collector (collector.yaml), with the images of ../versions.env, then the tracing
# environment on the seven instrumented services, as upstream's kustomize component
# google-cloud-operations sets it (kustomization.yaml, v0.10.6): ENABLE_TRACING=1,
# COLLECTOR_SERVICE_ADDR=opentelemetrycollector:4317 and OTEL_SERVICE_NAME=<service>, on
# the container 'server'. Only the tracing variables: the component's profiler variables
# need Google Cloud. Idempotent; a changed environment restarts the service's pods.
#
# Usage: deploy/tracing/apply.sh CONTEXT NAMESPACE
set -euo pipefail

[ "$#" -eq 2 ] || {
  echo "usage: $0 CONTEXT NAMESPACE" >&2
  exit 2
}
context="$1"
namespace="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../versions.env
. "$here/../versions.env"

# The services whose v0.10.6 source starts an OTLP exporter when ENABLE_TRACING=1
# (frontend/main.go L113, checkoutservice/main.go L90, productcatalogservice/server.go L69,
# currencyservice/server.js L50, paymentservice/index.js L34, emailservice/email_server.py
# L181, recommendationservice/recommendation_server.py L114). cartservice has no
# OpenTelemetry code, shippingservice and adservice only log that tracing is unavailable,
# and the load generator sends no spans.
INSTRUMENTED=(
  frontend
  checkoutservice
  productcatalogservice
  currencyservice
  paymentservice
  emailservice
  recommendationservice
)
COLLECTOR_ADDR="opentelemetrycollector:4317"

kube() {
  kubectl --context "$context" --namespace "$namespace" "$@"
}

# A template with its ${NAME} placeholders replaced by the versions.env values.
render() {
  sed -e "s|\${JAEGER_IMAGE}|${JAEGER_IMAGE}|g" \
    -e "s|\${JAEGER_MAX_TRACES}|${JAEGER_MAX_TRACES}|g" \
    -e "s|\${OTEL_COLLECTOR_IMAGE}|${OTEL_COLLECTOR_IMAGE}|g" "$1"
}

render "$here/jaeger.yaml" | kube apply -f -
render "$here/collector.yaml" | kube apply -f -
for service in "${INSTRUMENTED[@]}"; do
  kube set env "deployment/$service" --containers=server \
    ENABLE_TRACING=1 COLLECTOR_SERVICE_ADDR="$COLLECTOR_ADDR" OTEL_SERVICE_NAME="$service"
done
