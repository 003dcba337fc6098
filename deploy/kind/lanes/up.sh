#!/usr/bin/env bash
# A kind cluster with N r2act lanes: one Online Boutique per lane, each in its own opted-in
# namespace (boutique-lane-1 .. boutique-lane-N) and pinned by node affinity to its own
# worker node, so that one lane's CPU stress, pod failure or network delay never lands on
# another lane's node. Chaos Mesh and Prometheus run on a separate infra worker; Prometheus
# scrapes the kubelets (cAdvisor) of every node, so it sees every lane.
#
# Lane nodes are tainted r2act.io/lane=<i>:NoSchedule: only that lane's pods (which
# tolerate it) and DaemonSets that tolerate everything (chaos-daemon, node-exporter) run
# there. r2act collect refuses lanes that share a node unless the campaign allows it.
#
# Usage: deploy/kind/lanes/up.sh [LANES]          (default 4)
#        deploy/kind/lanes/up.sh --print-config N (the kind config only; needs nothing)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deploy="$(dirname "$(dirname "$here")")"
# shellcheck source=SCRIPTDIR/../../versions.env
. "$deploy/versions.env"

cluster_name="${KIND_CLUSTER_NAME}-lanes"
context="kind-${cluster_name}"

die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

lanes_arg() {
  if ! [[ "$1" =~ ^[1-9][0-9]*$ ]] || (($1 > 16)); then
    die "LANES must be 1..16, not '$1'"
  fi
  echo "$1"
}

# The kind config: control plane, one infra worker, one tainted worker per lane.
print_config() {
  local lanes="$1" i
  cat <<CONFIG
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
  - role: control-plane
    extraPortMappings:
      - {containerPort: ${PROMETHEUS_NODE_PORT}, hostPort: 9090, listenAddress: "127.0.0.1", protocol: TCP}
  - role: worker
    labels: {r2act.io/role: infra}
CONFIG
  for ((i = 1; i <= lanes; i++)); do
    cat <<CONFIG
  - role: worker
    labels: {r2act.io/role: lane, r2act.io/lane: "${i}"}
    kubeadmConfigPatches:
      - |
        kind: JoinConfiguration
        nodeRegistration:
          taints:
            - {key: r2act.io/lane, value: "${i}", effect: NoSchedule}
CONFIG
  done
}

# The pod-template patch that pins one lane's deployments to its node.
pin_patch() {
  local lane="$1"
  cat <<PATCH
{"spec": {"template": {"spec": {
  "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [
      {"key": "r2act.io/lane", "operator": "In", "values": ["${lane}"]}]}]}}},
  "tolerations": [{"key": "r2act.io/lane", "operator": "Equal", "value": "${lane}",
                   "effect": "NoSchedule"}]}}}}
PATCH
}

if [[ "${1:-}" == "--print-config" ]]; then
  count="$(lanes_arg "${2:-4}")"
  print_config "$count"
  exit 0
fi
if [[ "${1:-}" == "--print-patch" ]]; then
  lane="$(lanes_arg "${2:-1}")"
  pin_patch "$lane"
  exit 0
fi
lanes="$(lanes_arg "${1:-4}")"

kube() {
  kubectl --context "$context" "$@"
}

for tool in docker kind kubectl helm; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is required (see deploy/README.md)"
done
docker info >/dev/null 2>&1 || die "docker is installed but not running"

echo "[1/5] kind cluster ${cluster_name}: 1 infra + ${lanes} lane workers"
if kind get clusters 2>/dev/null | grep -qx "$cluster_name"; then
  echo "  exists; reusing it"
else
  kind create cluster --name "$cluster_name" --image "$KIND_NODE_IMAGE" \
    --config <(print_config "$lanes") --wait 300s
fi

echo "[2/5] Chaos Mesh ${CHAOS_MESH_CHART_VERSION} (daemon on every node, controller on infra)"
helm repo add chaos-mesh "$CHAOS_MESH_REPO" --force-update >/dev/null
helm upgrade --install chaos-mesh chaos-mesh/chaos-mesh \
  --kube-context "$context" --namespace "$CHAOS_MESH_NAMESPACE" --create-namespace \
  --version "$CHAOS_MESH_CHART_VERSION" \
  --set chaosDaemon.runtime=containerd \
  --set chaosDaemon.socketPath="$CONTAINERD_SOCKET" \
  --set 'chaosDaemon.tolerations[0].operator=Exists' \
  --set 'controllerManager.nodeSelector.r2act\.io/role=infra' \
  --set dashboard.create=false \
  --set controllerManager.leaderElection.enabled=false \
  --wait --timeout "$READY_TIMEOUT"

echo "[3/5] kube-prometheus-stack ${KUBE_PROMETHEUS_STACK_CHART_VERSION} (scrapes every node)"
helm repo add prometheus-community "$PROMETHEUS_REPO" --force-update >/dev/null
helm upgrade --install kps prometheus-community/kube-prometheus-stack \
  --kube-context "$context" --namespace "$MONITORING_NAMESPACE" --create-namespace \
  --version "$KUBE_PROMETHEUS_STACK_CHART_VERSION" \
  --set grafana.enabled=false --set alertmanager.enabled=false \
  --set kubeEtcd.enabled=false --set kubeScheduler.enabled=false \
  --set kubeControllerManager.enabled=false --set kubeProxy.enabled=false \
  --set 'prometheus.prometheusSpec.nodeSelector.r2act\.io/role=infra' \
  --set prometheus.prometheusSpec.scrapeInterval=15s \
  --set prometheus.service.type=NodePort \
  --set prometheus.service.nodePort="$PROMETHEUS_NODE_PORT" \
  --wait --timeout "$READY_TIMEOUT"

echo "[4/5] ${lanes} Online Boutique lanes, each pinned to its node"
for ((i = 1; i <= lanes; i++)); do
  ns="boutique-lane-${i}"
  kube create namespace "$ns" --dry-run=client -o yaml | kube apply -f -
  kube label namespace "$ns" r2act.io/chaos-allowed=true --overwrite
  kube apply --namespace "$ns" -f "$ONLINE_BOUTIQUE_MANIFEST" >/dev/null
  kube delete service frontend-external --namespace "$ns" --ignore-not-found >/dev/null
  "$deploy/loadgenerator/apply.sh" "$context" "$ns" >/dev/null
  "$deploy/tracing/apply.sh" "$context" "$ns" >/dev/null
  patch="$(pin_patch "$i")"
  for deployment in $(kube get deployments --namespace "$ns" -o name); do
    kube patch --namespace "$ns" "$deployment" --type merge -p "$patch" >/dev/null
  done
  echo "  ${ns} -> node with r2act.io/lane=${i}"
done

echo "[5/5] waiting for every lane"
for ((i = 1; i <= lanes; i++)); do
  kube wait deployment --all --namespace "boutique-lane-${i}" \
    --for=condition=Available --timeout "$READY_TIMEOUT"
done
echo "done. Lanes share context ${context}; a campaign's target:"
echo "  {kind: kubernetes, context: ${context}, namespace: boutique-lane-1,"
echo "   lanes: [{namespace: boutique-lane-2}, ...]}   (see deploy/kind/lanes/campaign.yaml)"
