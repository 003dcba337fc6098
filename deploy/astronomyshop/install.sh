#!/usr/bin/env bash
# Install the OpenTelemetry Astronomy Shop into one opted-in namespace of an existing
# cluster: the opentelemetry-demo chart by OCI reference at the version of ../versions.env,
# refused unless the pulled archive has the SHA-256 pinned there (and, when set, the OCI
# digest), with r2act's values.yaml, then r2act's RBAC for that namespace.
#
# The chart "does not support being upgraded from one version to another" (its docs), so a
# rerun uninstalls the release and installs it again rather than `helm upgrade`: every
# object, the flagd-config ConfigMap included (so every flag is back to its default), comes
# from the pinned chart.
#
# Usage: deploy/astronomyshop/install.sh CONTEXT [NAMESPACE]
#        (NAMESPACE defaults to ASTRONOMY_SHOP_NAMESPACE of ../versions.env)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deploy="$(dirname "$here")"
# shellcheck source=SCRIPTDIR/../versions.env
. "$deploy/versions.env"

die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: deploy/astronomyshop/install.sh CONTEXT [NAMESPACE]" >&2
  exit 2
fi
context="$1"
namespace="${2:-$ASTRONOMY_SHOP_NAMESPACE}"
release="$ASTRONOMY_SHOP_RELEASE"

for tool in helm kubectl; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is required (deploy/README.md, Prerequisites)"
done
helm_version="$(helm version --short 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true)"
[ -n "$helm_version" ] || die "cannot read the version of helm ('helm version --short' failed)"
[ "$(printf '%s\n%s\n' "$HELM_MIN_VERSION" "$helm_version" | sort -V | head -n 1)" = "$HELM_MIN_VERSION" ] ||
  die "helm $helm_version is too old; install helm >= $HELM_MIN_VERSION (https://helm.sh/docs/intro/install/)"

kube() {
  kubectl --context "$context" "$@"
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    die "neither sha256sum nor shasum is installed: cannot check the chart archive's SHA-256"
  fi
}

# Pull the chart once and install that file, so what is checked is what is installed.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "[1/5] pulling $ASTRONOMY_SHOP_CHART $ASTRONOMY_SHOP_CHART_VERSION"
pulled="$(helm pull "$ASTRONOMY_SHOP_CHART" --version "$ASTRONOMY_SHOP_CHART_VERSION" --destination "$work" 2>&1)" ||
  die "helm pull failed: $pulled"
digest="$(sed -n -E 's/^Digest: (sha256:[0-9a-f]{64})$/\1/p' <<<"$pulled")"
chart="$work/opentelemetry-demo-$ASTRONOMY_SHOP_CHART_VERSION.tgz"
[ -s "$chart" ] || die "helm pull wrote no $(basename "$chart"): $pulled"
# The archive itself, pinned by its SHA-256 (the chart repository index's digest, see
# README.md "Pinning"): the check that does not depend on how helm reports a pull.
archive="$(sha256_of "$chart")"
if [ -n "${ASTRONOMY_SHOP_CHART_SHA256:-}" ]; then
  [ "$archive" = "$ASTRONOMY_SHOP_CHART_SHA256" ] ||
    die "the pulled chart archive's SHA-256 is '${archive:-unknown}', not ASTRONOMY_SHOP_CHART_SHA256=\"$ASTRONOMY_SHOP_CHART_SHA256\" of deploy/versions.env: refusing to install it"
  echo "  archive sha256 $archive (as pinned)"
else
  echo "  archive sha256 $archive (not pinned: set ASTRONOMY_SHOP_CHART_SHA256 in deploy/versions.env to pin it)"
fi
# The OCI manifest, pinned by the digest helm reports, once someone has read it off the registry.
if [ -n "$ASTRONOMY_SHOP_CHART_DIGEST" ]; then
  [ "$digest" = "$ASTRONOMY_SHOP_CHART_DIGEST" ] ||
    die "the pulled chart's digest is '${digest:-unknown}', not ASTRONOMY_SHOP_CHART_DIGEST=\"$ASTRONOMY_SHOP_CHART_DIGEST\" of deploy/versions.env: refusing to install it"
  echo "  digest $digest (as pinned)"
else
  echo "  digest ${digest:-unknown} (not pinned: set ASTRONOMY_SHOP_CHART_DIGEST in deploy/versions.env to pin it)"
fi

echo "[2/5] namespace $namespace, opted in to chaos (r2act.io/chaos-allowed=true)"
kube create namespace "$namespace" --dry-run=client -o yaml | kube apply -f -
kube label namespace "$namespace" r2act.io/chaos-allowed=true --overwrite

echo "[3/5] release $release: reinstall, never upgrade"
if helm status "$release" --kube-context "$context" --namespace "$namespace" >/dev/null 2>&1; then
  helm uninstall "$release" --kube-context "$context" --namespace "$namespace" \
    --wait --timeout "$READY_TIMEOUT"
fi

echo "[4/5] installing the Astronomy Shop $ASTRONOMY_SHOP_VERSION (chart $ASTRONOMY_SHOP_CHART_VERSION; image pulls take several minutes)"
helm install "$release" "$chart" \
  --kube-context "$context" \
  --namespace "$namespace" \
  --values "$here/values.yaml" \
  --wait --timeout "$READY_TIMEOUT"
kube wait deployment --all --namespace "$namespace" \
  --for=condition=Available --timeout "$READY_TIMEOUT"

echo "[5/5] r2act RBAC for $namespace (deploy/rbac.yaml and the flag injector's rbac-flags.yaml)"
"$here/render-rbac.sh" "$namespace" | kube apply -f -
