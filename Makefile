# kafka-zk-operator developer commands. Every target installs what it needs (cached).
.PHONY: help bootstrap prepare demo demo-down test test-latest lint unit lock sync-crds chart-readme release

help:  ## list targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

bootstrap:  ## create .venv with the project and its test tools
	./scripts/bootstrap.sh

prepare: bootstrap  ## fetch Kafka jars, build kube-apiserver/etcd and the node (kubelet, images) into ~/.cache/kafka-zk-operator; MIT Kerberos, containerd, buildah (apt-get: root)
	.venv/bin/kzo dev prepare --node

demo: bootstrap  ## the main job: local stack + operator + example resources (no Kerberos needed)
	.venv/bin/kzo dev prepare --no-kerberos
	./scripts/demo.sh

demo-down:  ## stop what 'make demo' started
	.venv/bin/kzo dev down

lint: bootstrap  ## ruff (checks and formatting), mypy --strict (package and tests), import layering
	.venv/bin/ruff check operator tests benchmarks
	.venv/bin/ruff format --check operator tests benchmarks
	.venv/bin/mypy
	.venv/bin/lint-imports

unit: bootstrap  ## fast unit tests only
	.venv/bin/pytest tests/unit -q

test: prepare lint  ## the whole suite: lint + unit + integration + e2e against the real stack
	./scripts/run-tests.sh

test-latest:  ## the whole suite against the newest releases pyproject.toml allows (kopf, kazoo...), not the locks; make bootstrap goes back
	KZO_UNLOCKED=1 $(MAKE) test

lock:  ## refresh requirements/ (the image's lock, CI's constraints) from pyproject.toml; LOCK_ARGS=--upgrade: the newest versions
	./scripts/lock.sh $(LOCK_ARGS)

sync-crds:  ## copy crds/*.yaml into the Helm chart (tests/unit/test_chart_crds_in_sync.py checks it)
	cp crds/kafkatopics.yaml crds/partitionreassignments.yaml charts/kafka-zk-operator/crds/

chart-readme: bootstrap  ## regenerate charts/kafka-zk-operator/README.md from values.yaml comments (tests/unit/test_chart_readme.py checks it)
	.venv/bin/python scripts/gen_chart_readme.py

release: prepare  ## build release X.Y.Z into dist/ (HEAD tagged vX.Y.Z, clean tree): wheel, sdist, both images as OCI archives with SBOMs, the chart pinning their digests, SHA256SUMS (docs/releasing.md); DRY_RUN=1: from the working tree as it is
	.venv/bin/python scripts/release.py $(if $(DRY_RUN),--dry-run) $(RELEASE_ARGS)
