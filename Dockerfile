# kafka-zk-operator images.
#
#   VERSION=$(python3 scripts/version.py)
#   docker build --build-arg VERSION=$VERSION -t kafka-zk-operator:$VERSION .      the operator (target "runtime", the default)
#   docker build --build-arg VERSION=$VERSION --target spark -t kafka-zk-operator-spark:$VERSION .  PySpark planning job
#
# VERSION is required: the builder checks that it is the wheel's version (kafka_zk_operator.__version__),
# so that the image label org.opencontainers.image.version says what the image runs (docs/versioning.md).
#
# The wheel is built once from pyproject.toml + operator/ in "builder"; the final stages install only
# that wheel (no compiler, no source tree) and run as the unprivileged user 10001. No HEALTHCHECK:
# Kubernetes probes kopf's liveness endpoint (:8080/healthz, KZO_HEALTH_PORT).
# tests/integration/test_chart_image.py lints this file with hadolint and repeats its install steps
# in a fresh virtualenv.
#
# The Python images come through build arguments so that a machine without a registry can pass bases
# of its own (the local stack's real node does: devstack/images.py makes Debian bookworm ones); the
# defaults are the official image.
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm
ARG BUILDER_IMAGE=python:3.11.13-slim-bookworm

FROM ${BUILDER_IMAGE} AS builder
# The [kerberos] extra (SASL GSSAPI) is the PyPI "kerberos" binding (ZooKeeper) and "gssapi" (Kafka's
# listeners, through kafka-python), sdists compiled against MIT Kerberos: built here into wheels, so
# the runtime needs only the shared libraries.
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc=4:12.* libc6-dev=2.36-* libkrb5-dev=1.20.* \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY requirements/ requirements/
COPY operator/ operator/
# The operator's dependencies are exactly requirements/runtime.txt (the lock: every package with its
# hashes, scripts/lock.sh), fetched and checked here into /locked (the Kerberos bindings compiled).
# spark-requirements.txt names the wheel with its [spark] extra for the "spark" target, whose
# versions requirements/dev.txt constrains.
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels . \
    && pip wheel --no-cache-dir --no-deps --require-hashes --wheel-dir /locked \
        --requirement requirements/runtime.txt \
    && cp requirements/dev.txt /wheels/constraints.txt \
    && for wheel in /wheels/kafka_zk_operator-*.whl; do \
         echo "/tmp/wheels/$(basename "$wheel")[spark]" > /wheels/spark-requirements.txt; \
       done
ARG VERSION
RUN if [ ! -e "/wheels/kafka_zk_operator-${VERSION:-unset}-py3-none-any.whl" ]; then \
      echo "--build-arg VERSION=${VERSION:-} is not the wheel's version ($(ls /wheels)):" \
           "pass --build-arg VERSION=\$(python3 scripts/version.py)" >&2; \
      exit 1; \
    fi

FROM ${PYTHON_IMAGE} AS base
ARG VERSION
LABEL org.opencontainers.image.title="kafka-zk-operator" \
      org.opencontainers.image.description="Kubernetes operator for Kafka clusters in ZooKeeper mode" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN groupadd --system --gid 10001 kzo \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/kzo --shell /usr/sbin/nologin kzo
WORKDIR /home/kzo
# The license text (Apache-2.0 section 4(a)); the wheel's dist-info carries it too.
COPY LICENSE /usr/share/doc/kafka-zk-operator/LICENSE

# PySpark planning job: Debian's Java 17 and the [spark] extra (docs/spark.md). The operator runs it
# as a Kubernetes Job doing spark-submit in cluster mode; Spark then starts this image as the driver
# ("driver ...") and the executors ("executor ..."), which kafka_zk_operator.spark.entrypoint turns
# into what Apache Spark's own entrypoint.sh runs. Any other arguments select the kzo subcommand.
# /opt/kzo/spark_driver.py is the driver program spark-submit is given (local:///opt/kzo/...).
FROM base AS spark
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jre-headless=17.0.* \
    && rm -rf /var/lib/apt/lists/*
COPY --from=builder /wheels/ /tmp/wheels/
RUN pip install --no-cache-dir --constraint /tmp/wheels/constraints.txt \
        --requirement /tmp/wheels/spark-requirements.txt \
    && rm -rf /tmp/wheels \
    && mkdir -p /opt/kzo \
    && printf '%s\n' 'from kafka_zk_operator.spark_driver import main' 'raise SystemExit(main())' \
       > /opt/kzo/spark_driver.py
USER 10001:10001
ENTRYPOINT ["python", "-m", "kafka_zk_operator.spark.entrypoint"]
CMD ["--help"]

# The operator (default target): the wheel and the locked runtime dependencies with the [kerberos]
# extra, nothing resolved here (no index); libgssapi-krb5-2 is MIT Kerberos for the bindings
# (krb5.conf and keytab come from the chart).
FROM base AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgssapi-krb5-2=1.20.* \
    && rm -rf /var/lib/apt/lists/*
COPY --from=builder /wheels/ /tmp/wheels/
COPY --from=builder /locked/ /tmp/locked/
RUN pip install --no-cache-dir --no-index --no-deps /tmp/locked/*.whl /tmp/wheels/kafka_zk_operator-*.whl \
    && pip check \
    && rm -rf /tmp/wheels /tmp/locked
USER 10001:10001
EXPOSE 8080 9090
ENTRYPOINT ["kzo", "operator"]
