"""Delivery: object metadata and host headers, the deploy plan, its execution on S3, and the local origin."""

from __future__ import annotations

from .headers import CSP, ObjectHeaders, headers_for, write_host_files
from .plan import DEFAULT_GRACE, MANIFEST_NAME, Action, LocalFile, Manifest, Plan, format_plan, make_plan, scan_site
from .s3 import DeployResult, S3Store, Target, execute, make_client, parse_target, plan_deploy

__all__ = [
    "CSP",
    "DEFAULT_GRACE",
    "MANIFEST_NAME",
    "Action",
    "DeployResult",
    "LocalFile",
    "Manifest",
    "ObjectHeaders",
    "Plan",
    "S3Store",
    "Target",
    "execute",
    "format_plan",
    "headers_for",
    "make_client",
    "make_plan",
    "parse_target",
    "plan_deploy",
    "scan_site",
    "write_host_files",
]
