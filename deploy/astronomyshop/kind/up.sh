#!/usr/bin/env bash
# Create the Astronomy Shop test bed on kind: a cluster of its own, a slim
# kube-prometheus-stack (cAdvisor and kube-state-metrics, as for Online Boutique), the
# Astronomy Shop in its opted-in namespace (../install.sh) and r2act's RBAC, then check
# that the shop answers, that Jaeger holds its traces and that the collector prints its
# log records. Versions and names come from ../../versions.env.
#
# Usage: deploy/astronomyshop/kind/up.sh            check the prerequisites, then create
#        deploy/astronomyshop/kind/up.sh --check    check the prerequisites only
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
shop="$(dirname "$here")"
deploy="$(dirname "$shop")"
# shellcheck source=SCRIPTDIR/../../versions.env
. "$deploy/versions.env"

cluster="$ASTRONOMY_SHOP_KIND_CLUSTER_NAME"
context="kind-${cluster}"
namespace="$ASTRONOMY_SHOP_NAMESPACE"

die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

kube() {
  kubectl --context "$context" "$@"
}

echo "[1/6] checking prerequisites"
for tool in docker kind kubectl helm curl; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is required (deploy/astronomyshop/README.md, Prerequisites)"
done
kind_version="$(kind version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true)"
[ "$(printf '%s\n%s\n' "$KIND_MIN_VERSION" "${kind_version:-0.0.0}" | sort -V | head -n 1)" = "$KIND_MIN_VERSION" ] ||
  die "kind ${kind_version:-unknown} is too old for the pinned node image; install kind >= $KIND_MIN_VERSION"
docker info >/dev/null 2>&1 || die "docker is installed but not running (or not accessible to $(id -un))"
if [ "${1:-}" = "--check" ]; then
  echo "prerequisites met"
  exit 0
fi

echo "[2/6] kind cluster ${cluster} (${KIND_NODE_IMAGE})"
if kind get clusters 2>/dev/null | grep -qx "$cluster"; then
  echo "  exists; reusing it"
else
  kind create cluster --name "$cluster" --image "$KIND_NODE_IMAGE" \
    --config "$here/cluster.yaml" --wait 300s
fi

echo "[3/6] kube-prometheus-stack ${KUBE_PROMETHEUS_STACK_CHART_VERSION} (slim; Prometheus on ${ASTRONOMY_SHOP_PROMETHEUS_URL})"
helm repo add prometheus-community "$PROMETHEUS_REPO" --force-update >/dev/null
helm show crds prometheus-community/kube-prometheus-stack --version "$KUBE_PROMETHEUS_STACK_CHART_VERSION" |
  kube apply --server-side --force-conflicts -f - >/dev/null
helm upgrade --install kps prometheus-community/kube-prometheus-stack \
  --kube-context "$context" \
  --namespace "$MONITORING_NAMESPACE" --create-namespace \
  --version "$KUBE_PROMETHEUS_STACK_CHART_VERSION" \
  --skip-crds \
  --set grafana.enabled=false \
  --set alertmanager.enabled=false \
  --set nodeExporter.enabled=false \
  --set kubeEtcd.enabled=false \
  --set kubeScheduler.enabled=false \
  --set kubeControllerManager.enabled=false \
  --set kubeProxy.enabled=false \
  --set prometheus.prometheusSpec.scrapeInterval=15s \
  --set prometheus.service.type=NodePort \
  --set prometheus.service.nodePort="$ASTRONOMY_SHOP_PROMETHEUS_NODE_PORT" \
  --wait --timeout "$READY_TIMEOUT"

echo "[4/6] the Astronomy Shop in ${namespace}"
"$shop/install.sh" "$context" "$namespace"

echo "[5/6] the shop answers through the API server's service proxy"
proxy="/api/v1/namespaces/${namespace}/services"
kube get --raw "${proxy}/frontend-proxy:8080/proxy/" >/dev/null ||
  die "frontend-proxy does not answer / through the API proxy"
curl -fsS "${ASTRONOMY_SHOP_PROMETHEUS_URL}/-/ready" >/dev/null ||
  die "Prometheus is not ready on ${ASTRONOMY_SHOP_PROMETHEUS_URL}"

echo "[6/6] traces reach Jaeger and log records reach the collector's stdout"
for _ in $(seq 1 60); do
  if kube get --raw "${proxy}/jaeger:16686/proxy/jaeger/ui/api/services" 2>/dev/null | grep -q '"frontend"' &&
    kube logs --namespace "$namespace" -l component=agent-collector --tail=-1 2>/dev/null | grep -q 'LogRecord #'; then
    break
  fi
  sleep 5
done
kube get --raw "${proxy}/jaeger:16686/proxy/jaeger/ui/api/services" | grep -q '"frontend"' ||
  die "Jaeger lists no trace of the frontend after five minutes"
kube logs --namespace "$namespace" -l component=agent-collector --tail=-1 | grep -q 'LogRecord #' ||
  die "the collector printed no log record after five minutes"

cat <<NEXT

Ready: kubeconfig context ${context}, namespace ${namespace}, Prometheus ${ASTRONOMY_SHOP_PROMETHEUS_URL}.
Remove everything with:
  deploy/astronomyshop/kind/down.sh
NEXT
