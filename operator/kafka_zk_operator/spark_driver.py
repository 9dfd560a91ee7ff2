"""The driver program of an offloaded plan: input ConfigMaps -> the Spark job -> result ConfigMaps.

``spark-submit --deploy-mode cluster ... local:///opt/kzo/spark_driver.py --namespace NS --job
NAME`` runs this in the driver pod (the image's ``spark`` target has that two-line launcher).
It reads the job's input chunks (snapshot + request, ``adapters.k8s.spark_submit``), plans with
``kafka_zk_operator.spark.job.run_plan`` on spark-submit's session, and writes the plan result
document (``domain.documents.plan_result``) as the job's result chunks. An input the planner refuses
gives an error document instead (so the operator reports why), and exit code 0: the job did
its work. A rerun first deletes the job's earlier result chunks. Anything else (API unreachable, Spark failure) exits non-zero, which fails the Job.

The same program runs outside Kubernetes for tests: ``python -m
kafka_zk_operator.spark_driver --namespace NS --job NAME --master local[2]
--kubeconfig FILE``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from kafka_zk_operator.adapters.k8s import spark_submit
from kafka_zk_operator.adapters.k8s.api import api_client
from kafka_zk_operator.adapters.k8s.spark_jobs import SparkJobs
from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.documents import plan_result as plan_document
from kafka_zk_operator.spark import job


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="spark_driver", description=__doc__.split("\n")[0])
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--job", required=True, help="the job's name (label of its ConfigMaps)")
    parser.add_argument("--master", help="Spark master (default: spark-submit's)")
    parser.add_argument("--kubeconfig", help="outside a pod: the kubeconfig to use")
    parser.add_argument("--chunk-bytes", type=int, default=spark_submit.CHUNK_BYTES, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    jobs = SparkJobs(api_client(args.kubeconfig))
    chunks = jobs.configmaps(args.namespace, args.job, spark_submit.INPUT)
    snapshot = spark_submit.unpack(chunks)
    if snapshot is None:
        print(f"error: the input ConfigMaps of {args.job} are missing or incomplete", file=sys.stderr)
        return 1
    sha = plan_document.digest(snapshot)
    started = time.perf_counter()
    try:
        raw = spark_submit.first_chunk_data(chunks).get(spark_submit.REQUEST_KEY)
        if raw is None:
            raise errors.InvalidSpec(f"the input of {args.job} has no {spark_submit.REQUEST_KEY}")
        try:
            request = plan_document.request_from_dict(json.loads(raw))
        except ValueError as exc:
            raise errors.InvalidSpec(f"the request of {args.job} is not JSON: {exc}") from None
        cluster = job.load_snapshot(snapshot, allow_mixed_rf=True)
        plan = job.run_plan(lambda: job.session_for(args.master), cluster, request)
        document = plan_document.plan_document(plan, request=request, input_sha256=sha)
        summary = f"{plan.report.moves} moves (M_LB {plan.report.m_lb})"
    except (errors.InvalidSpec, errors.NotSupported) as exc:  # the planner refuses the input
        document = plan_document.error_document(str(exc), input_sha256=sha)
        summary = f"refused: {exc}"
    payload = plan_document.dump(document)
    results = spark_submit.chunk_configmaps(
        args.job, args.namespace, spark_submit.RESULT, payload, chunk_bytes=args.chunk_bytes
    )
    # A rerun may write fewer chunks: old ones must not mix with the new payload.
    jobs.delete_configmaps(args.namespace, spark_submit.selector(args.job, spark_submit.RESULT))
    for body in results:
        jobs.put_configmap(body)
    print(f"{args.job}: {summary}; {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
