#!/usr/bin/env bash
# Create the r2act test bed on kind: Online Boutique (namespace opted in to chaos) with
# its traces in r2act's own Jaeger, Chaos Mesh with the containerd runtime, a slim
# kube-prometheus-stack and r2act's least-privilege RBAC. Versions and the namespace are
# pinned in ../versions.env.
# Idempotent: rerunning it on an existing cluster upgrades in place, CRDs included (Helm
# installs a chart's CRDs only once, so they are applied here, server-side, before each
# chart).
#
# Usage: deploy/kind/up.sh            check the prerequisites, then create or upgrade
#        deploy/kind/up.sh --check    check the prerequisites only
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deploy="$(dirname "$here")"
repo="$(dirname "$deploy")"
# shellcheck source=SCRIPTDIR/../versions.env
. "$deploy/versions.env"

# Where the kernel lists loaded and built-in modules; overridable so the check can be tested.
SYS_MODULE_DIR="${R2ACT_SYS_MODULE_DIR:-/sys/module}"
MODULES_BUILTIN="${R2ACT_MODULES_BUILTIN:-/lib/modules/$(uname -r)/modules.builtin}"
DEMO_CAMPAIGN="$repo/campaigns/kind-demo.yaml"

context="kind-${KIND_CLUSTER_NAME}"
# The cluster's Kubernetes version is the node image's tag (kindest/node:v1.32.2@sha256:...).
kubernetes_version="${KIND_NODE_IMAGE#*:v}"
kubernetes_version="${kubernetes_version%%@*}"
steps=8
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

# The first x.y.z in a tool's version output ('kind v0.27.0 go1.23 ...', 'v3.17.1+g98').
semver() {
  grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1
}

# True when version $1 >= version $2 (both x.y.z).
at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

kubectl_version_of() {
  "$1" version --client -o json 2>/dev/null | grep -m 1 '"gitVersion"' | semver || true
}

# The kubectl of versions.env (the cluster's minor version), in a per-user cache: fetched
# once from the Kubernetes release bucket and checked against its published SHA-256, then
# put first on PATH for this script and the scripts it runs. R2ACT_KUBECTL_CACHE overrides
# the cache directory.
use_pinned_kubectl() {
  local os arch dir url want got
  dir="${R2ACT_KUBECTL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/r2act/kubectl}/$KUBECTL_VERSION"
  if [ "$(kubectl_version_of "$dir/kubectl")" != "${KUBECTL_VERSION#v}" ]; then
    os="$(uname -s | tr '[:upper:]' '[:lower:]')"
    case "$(uname -m)" in
      x86_64 | amd64) arch=amd64 ;;
      aarch64 | arm64) arch=arm64 ;;
      *) die "no pinned kubectl for $(uname -m); install kubectl ${kubernetes_version%.*}.x (https://kubernetes.io/docs/tasks/tools/)" ;;
    esac
    url="$KUBECTL_RELEASES/$KUBECTL_VERSION/bin/$os/$arch/kubectl"
    mkdir -p "$dir"
    echo "  downloading kubectl $KUBECTL_VERSION ($os/$arch) to $dir"
    if ! curl -fsSL -o "$dir/kubectl.part" "$url" || ! want="$(curl -fsSL "$url.sha256")" ||
      [ ! -s "$dir/kubectl.part" ]; then
      rm -f "$dir/kubectl.part"
      die "could not download the pinned kubectl from $url; install kubectl ${kubernetes_version%.*}.x (https://kubernetes.io/docs/tasks/tools/)"
    fi
    got="$(sha256sum "$dir/kubectl.part" 2>/dev/null || shasum -a 256 "$dir/kubectl.part")"
    [ "${got%% *}" = "${want%% *}" ] || {
      rm -f "$dir/kubectl.part"
      die "the downloaded kubectl does not match the SHA-256 published at $url.sha256"
    }
    chmod +x "$dir/kubectl.part" && mv "$dir/kubectl.part" "$dir/kubectl"
  fi
  PATH="$dir:$PATH"
  export PATH
}

check_versions() {
  local kind_version helm_version kubectl_version client_minor server_minor
  kind_version="$(kind version 2>/dev/null | semver || true)"
  [ -n "$kind_version" ] || die "cannot read the version of kind ('kind version' failed)"
  at_least "$kind_version" "$KIND_MIN_VERSION" ||
    die "kind $kind_version is too old for the pinned node image; install kind >= $KIND_MIN_VERSION (https://kind.sigs.k8s.io/docs/user/quick-start/#installation)"
  helm_version="$(helm version --short 2>/dev/null | semver || true)"
  [ -n "$helm_version" ] || die "cannot read the version of helm ('helm version --short' failed)"
  at_least "$helm_version" "$HELM_MIN_VERSION" ||
    die "helm $helm_version is too old; install helm >= $HELM_MIN_VERSION (https://helm.sh/docs/intro/install/)"
  kubectl_version="$(kubectl_version_of kubectl)"
  [ -n "$kubectl_version" ] || die "cannot read the version of kubectl ('kubectl version --client' failed)"
  # kubectl may be one minor version older or newer than the cluster (the skew policy).
  client_minor="${kubectl_version#*.}"
  client_minor="${client_minor%%.*}"
  server_minor="${kubernetes_version#*.}"
  server_minor="${server_minor%%.*}"
  if [ "${kubectl_version%%.*}" != "${kubernetes_version%%.*}" ] ||
    [ "$client_minor" -lt $((server_minor - 1)) ] || [ "$client_minor" -gt $((server_minor + 1)) ]; then
    printf 'warning: kubectl %s is more than one minor version away from the cluster'"'"'s Kubernetes %s (outside the skew policy); this script uses the pinned kubectl %s instead\n' \
      "$kubectl_version" "$kubernetes_version" "$KUBECTL_VERSION" >&2
    use_pinned_kubectl
    kubectl_version="$(kubectl_version_of kubectl)"
  fi
  printf '  kind %s, helm %s, kubectl %s (%s)\n' "$kind_version" "$helm_version" "$kubectl_version" "$(command -v kubectl)"
}

# network_delay faults need the netem qdisc in the kernel the kind nodes run on, which on
# Linux is the host's: chaos-daemon's tc calls fail (and so does their recovery) without it.
check_netem() {
  if [ "$(uname -s)" != "Linux" ]; then
    echo "  sch_netem: not checked on $(uname -s) (Docker runs its own Linux VM there; network_delay faults need sch_netem in that VM's kernel)"
    return
  fi
  if [ -d "$SYS_MODULE_DIR/sch_netem" ] || grep -qs '/sch_netem\.ko' "$MODULES_BUILTIN"; then
    echo "  sch_netem: loaded"
    return
  fi
  die "the host kernel has no sch_netem loaded, and network_delay faults (and their recovery) need it inside kind: run 'sudo modprobe sch_netem' (on Ubuntu the module ships in linux-modules-extra-$(uname -r)), then rerun"
}

# The one value of an indented 'key: value' line (quotes and a trailing comment removed).
yaml_value() {
  local values
  values="$(sed -n -E "s/^[[:space:]]+$1:[[:space:]]*\"?([^\"#[:space:]]+)\"?.*$/\1/p" "$2")"
  [ "$(printf '%s\n' "$values" | grep -c .)" = 1 ] ||
    die "$2: expected exactly one '$1:' line in the target, found: ${values:-none}"
  printf '%s\n' "$values"
}

# The demo campaign names the namespace and context too; it must agree with versions.env,
# or r2act would act (or be refused) somewhere up.sh did not prepare.
check_campaign() {
  local namespace campaign_context
  namespace="$(yaml_value namespace "$DEMO_CAMPAIGN")"
  campaign_context="$(yaml_value context "$DEMO_CAMPAIGN")"
  [ "$namespace" = "$R2ACT_NAMESPACE" ] ||
    die "campaigns/kind-demo.yaml targets namespace '$namespace' but deploy/versions.env sets R2ACT_NAMESPACE=\"$R2ACT_NAMESPACE\": make the campaign's target.namespace '$R2ACT_NAMESPACE' (or change versions.env)"
  [ "$campaign_context" = "$context" ] ||
    die "campaigns/kind-demo.yaml targets context '$campaign_context' but the cluster's is '$context' (KIND_CLUSTER_NAME in deploy/versions.env): make the campaign's target.context '$context'"
  echo "  campaigns/kind-demo.yaml targets ${context}, namespace ${namespace}"
}

# Helm installs a chart's CRDs on the first install only and never upgrades them; apply the
# chart's own CRDs server-side (they exceed the client-side annotation limit), taking over
# the fields Helm wrote, so a rerun with a newer chart version upgrades them too.
apply_crds() {
  local chart="$1" version="$2" crds
  crds="$(helm show crds "$chart" --version "$version")"
  grep -q '^kind: CustomResourceDefinition' <<<"$crds" ||
    die "helm show crds $chart --version $version printed no CRD"
  kube apply --server-side --force-conflicts -f - <<<"$crds" >/dev/null
  echo "  $(grep -c '^kind: CustomResourceDefinition' <<<"$crds") CRDs of $chart $version applied"
}

progress "checking prerequisites"
need docker "https://docs.docker.com/engine/install/"
need kind "https://kind.sigs.k8s.io/docs/user/quick-start/#installation"
need kubectl "https://kubernetes.io/docs/tasks/tools/"
need helm "https://helm.sh/docs/intro/install/"
need curl "your package manager"
check_versions
check_netem
check_campaign
docker info >/dev/null 2>&1 || die "docker is installed but not running (or not accessible to $(id -un))"
if [ "${1:-}" = "--check" ]; then
  echo "prerequisites met"
  exit 0
fi

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
apply_crds chaos-mesh/chaos-mesh "$CHAOS_MESH_CHART_VERSION"
helm upgrade --install chaos-mesh chaos-mesh/chaos-mesh \
  --kube-context "$context" \
  --namespace "$CHAOS_MESH_NAMESPACE" --create-namespace \
  --version "$CHAOS_MESH_CHART_VERSION" \
  --skip-crds \
  --set chaosDaemon.runtime=containerd \
  --set chaosDaemon.socketPath="$CONTAINERD_SOCKET" \
  --set dashboard.create=false \
  --set controllerManager.leaderElection.enabled=false \
  --wait --timeout "$READY_TIMEOUT"

progress "kube-prometheus-stack ${KUBE_PROMETHEUS_STACK_CHART_VERSION} (slim; Prometheus on ${PROMETHEUS_URL})"
helm repo add prometheus-community "$PROMETHEUS_REPO" --force-update >/dev/null
apply_crds prometheus-community/kube-prometheus-stack "$KUBE_PROMETHEUS_STACK_CHART_VERSION"
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
  --set prometheus.service.nodePort="$PROMETHEUS_NODE_PORT" \
  --wait --timeout "$READY_TIMEOUT"

progress "Online Boutique ${ONLINE_BOUTIQUE_VERSION} in ${R2ACT_NAMESPACE}"
kube apply --namespace "$R2ACT_NAMESPACE" -f "$ONLINE_BOUTIQUE_MANIFEST"
# The LoadBalancer service never gets an address on kind; r2act uses the API proxy.
kube delete service frontend-external --namespace "$R2ACT_NAMESPACE" --ignore-not-found
# The load generator opens a new connection per request, so HTTPChaos meets user traffic.
"$deploy/loadgenerator/apply.sh" "$context" "$R2ACT_NAMESPACE"

progress "traces: r2act's OpenTelemetry Collector and Jaeger ${JAEGER_IMAGE##*:} in ${R2ACT_NAMESPACE}"
# Upstream's collector exports to Google Cloud only; the seven instrumented services send
# their spans to r2act's collector, which keeps them in Jaeger (deploy/tracing/).
"$deploy/tracing/apply.sh" "$context" "$R2ACT_NAMESPACE"
echo "  waiting for every deployment to be available (image pulls take a few minutes)"
kube wait deployment --all --namespace "$R2ACT_NAMESPACE" \
  --for=condition=Available --timeout "$READY_TIMEOUT"

progress "r2act RBAC for ${R2ACT_NAMESPACE} and readiness checks"
"$deploy/render-rbac.sh" "$R2ACT_NAMESPACE" | kube apply -f -
echo "  waiting for Prometheus on ${PROMETHEUS_URL}"
for _ in $(seq 1 60); do
  if curl -fsS "${PROMETHEUS_URL}/-/ready" >/dev/null 2>&1; then
    break
  fi
  sleep 5
done
curl -fsS "${PROMETHEUS_URL}/-/ready" >/dev/null || die "Prometheus is not ready on ${PROMETHEUS_URL}"
kube get --raw "/api/v1/namespaces/${R2ACT_NAMESPACE}/services/frontend:80/proxy/_healthz" >/dev/null ||
  die "the frontend does not answer /_healthz through the API proxy"
# Spans arrive once the load generator's requests reach the traced frontend.
echo "  waiting for the frontend's spans in Jaeger (through the API proxy)"
jaeger_services="/api/v1/namespaces/${R2ACT_NAMESPACE}/services/jaeger:16686/proxy/jaeger/ui/api/services"
for _ in $(seq 1 60); do
  if kube get --raw "$jaeger_services" 2>/dev/null | grep -q '"frontend"'; then
    break
  fi
  sleep 5
done
kube get --raw "$jaeger_services" | grep -q '"frontend"' ||
  die "Jaeger lists no span of the frontend after five minutes (kubectl --context ${context} -n ${R2ACT_NAMESPACE} logs deployment/opentelemetrycollector, and deployment/jaeger)"

cat <<NEXT

Ready: kubeconfig context ${context}, namespace ${R2ACT_NAMESPACE}, Prometheus ${PROMETHEUS_URL}.
Next:
  r2act collect campaigns/kind-demo.yaml
Remove everything with:
  deploy/kind/down.sh
NEXT
