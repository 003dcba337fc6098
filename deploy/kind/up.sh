#!/usr/bin/env bash
# Create the r2act test bed on kind: Online Boutique (namespace opted in to chaos),
# Chaos Mesh with the containerd runtime, a slim kube-prometheus-stack and r2act's
# least-privilege RBAC. Versions are pinned in ../versions.env. Idempotent: rerunning it
# on an existing cluster upgrades in place.
#
# Usage: deploy/kind/up.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deploy="$(dirname "$here")"
# shellcheck source=SCRIPTDIR/../versions.env
. "$deploy/versions.env"

context="kind-${KIND_CLUSTER_NAME}"
steps=7
step=0

progress() {
  step=$((step + 1))
  printf '\n[%d/%d] %s\n' "$step" "$steps" "$*"
}

die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

need() {
  command -v "$1" >/dev/null 2>&1 || die "$1 is required ($2)"
}

kube() {
  kubectl --context "$context" "$@"
}

progress "checking prerequisites"
need docker "https://docs.docker.com/engine/install/"
need kind "https://kind.sigs.k8s.io/docs/user/quick-start/#installation"
need kubectl "https://kubernetes.io/docs/tasks/tools/"
need helm "https://helm.sh/docs/intro/install/"
need curl "your package manager"
docker info >/dev/null 2>&1 || die "docker is installed but not running (or not accessible to $(id -un))"
printf '  kind %s, kubectl %s, helm %s\n' \
  "$(kind version -q 2>/dev/null || echo '?')" \
  "$(kubectl version --client -o json 2>/dev/null | grep -m1 gitVersion | tr -d ' ",' | cut -d: -f2)" \
  "$(helm version --short 2>/dev/null)"

progress "kind cluster ${KIND_CLUSTER_NAME} (${KIND_NODE_IMAGE})"
if kind get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER_NAME"; then
  echo "  exists; reusing it"
else
  kind create cluster --name "$KIND_CLUSTER_NAME" --image "$KIND_NODE_IMAGE" \
    --config "$here/cluster.yaml" --wait 300s
fi
kube cluster-info >/dev/null

progress "namespace ${R2ACT_NAMESPACE}, opted in to chaos (r2act.io/chaos-allowed=true)"
kube create namespace "$R2ACT_NAMESPACE" --dry-run=client -o yaml | kube apply -f -
kube label namespace "$R2ACT_NAMESPACE" r2act.io/chaos-allowed=true --overwrite

progress "Chaos Mesh ${CHAOS_MESH_CHART_VERSION} (containerd at ${CONTAINERD_SOCKET})"
helm repo add chaos-mesh "$CHAOS_MESH_REPO" --force-update >/dev/null
helm upgrade --install chaos-mesh chaos-mesh/chaos-mesh \
  --kube-context "$context" \
  --namespace "$CHAOS_MESH_NAMESPACE" --create-namespace \
  --version "$CHAOS_MESH_CHART_VERSION" \
  --set chaosDaemon.runtime=containerd \
  --set chaosDaemon.socketPath="$CONTAINERD_SOCKET" \
  --set dashboard.create=false \
  --set controllerManager.leaderElection.enabled=false \
  --wait --timeout "$READY_TIMEOUT"

progress "kube-prometheus-stack ${KUBE_PROMETHEUS_STACK_CHART_VERSION} (slim; Prometheus on ${PROMETHEUS_URL})"
helm repo add prometheus-community "$PROMETHEUS_REPO" --force-update >/dev/null
helm upgrade --install kps prometheus-community/kube-prometheus-stack \
  --kube-context "$context" \
  --namespace "$MONITORING_NAMESPACE" --create-namespace \
  --version "$KUBE_PROMETHEUS_STACK_CHART_VERSION" \
  --set grafana.enabled=false \
  --set alertmanager.enabled=false \
  --set kubeEtcd.enabled=false \
  --set kubeScheduler.enabled=false \
  --set kubeControllerManager.enabled=false \
  --set kubeProxy.enabled=false \
  --set prometheus.prometheusSpec.scrapeInterval=15s \
  --set prometheus.service.type=NodePort \
  --set prometheus.service.nodePort="$PROMETHEUS_NODE_PORT" \
  --wait --timeout "$READY_TIMEOUT"

progress "Online Boutique ${ONLINE_BOUTIQUE_VERSION} in ${R2ACT_NAMESPACE}"
kube apply --namespace "$R2ACT_NAMESPACE" -f "$ONLINE_BOUTIQUE_MANIFEST"
# The LoadBalancer service never gets an address on kind; r2act uses the API proxy.
kube delete service frontend-external --namespace "$R2ACT_NAMESPACE" --ignore-not-found
echo "  waiting for every deployment to be available (image pulls take a few minutes)"
kube wait deployment --all --namespace "$R2ACT_NAMESPACE" \
  --for=condition=Available --timeout "$READY_TIMEOUT"

progress "r2act RBAC and readiness checks"
kube apply -f "$deploy/rbac.yaml"
echo "  waiting for Prometheus on ${PROMETHEUS_URL}"
for _ in $(seq 1 60); do
  if curl -fsS "${PROMETHEUS_URL}/-/ready" >/dev/null 2>&1; then
    break
  fi
  sleep 5
done
curl -fsS "${PROMETHEUS_URL}/-/ready" >/dev/null || die "Prometheus is not ready on ${PROMETHEUS_URL}"
kube get --raw "/api/v1/namespaces/${R2ACT_NAMESPACE}/services/frontend:80/proxy/_healthz" >/dev/null \
  || die "the frontend does not answer /_healthz through the API proxy"

cat <<NEXT

Ready: kubeconfig context ${context}, namespace ${R2ACT_NAMESPACE}, Prometheus ${PROMETHEUS_URL}.
Next:
  r2act collect campaigns/kind-demo.yaml
Remove everything with:
  deploy/kind/down.sh
NEXT
