"""A real S3-compatible server for the store tests: moto's, on 127.0.0.1, enforcing IAM.

Run as a script by ``conftest.py`` (``python moto_s3.py``): moto reads ``INITIAL_NO_AUTH_ACTION_COUNT``
when it is imported, so the server lives in its own process. The first requests (this script's
own set-up: a bucket, a writer and a read-only reviewer with their access keys) are let through;
from then on every request must be signed by a known key and allowed by its user's policy, as on
AWS. Prints one JSON line (port and the two key pairs) and serves until its stdin closes.
"""

from __future__ import annotations

import json
import os
import sys

BUCKET = "oracleproto-test"
#: The set-up's own requests: create_bucket, then create_user, put_user_policy, create_access_key × 2.
SETUP_ACTIONS = 7

WRITER_POLICY = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
}
READER_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": ["s3:GetObject", "s3:ListBucket"], "Resource": "*"},
    ],
}


def main() -> None:
    os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = str(SETUP_ACTIONS)
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    _, port = server.get_host_and_port()
    endpoint = f"http://127.0.0.1:{port}"
    setup = {"aws_access_key_id": "setup", "aws_secret_access_key": "setup", "region_name": "us-east-1"}
    boto3.client("s3", endpoint_url=endpoint, **setup).create_bucket(Bucket=BUCKET)
    iam = boto3.client("iam", endpoint_url=endpoint, **setup)
    keys = {}
    for user, policy in (("writer", WRITER_POLICY), ("reviewer", READER_POLICY)):
        iam.create_user(UserName=user)
        iam.put_user_policy(UserName=user, PolicyName="store", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName=user)["AccessKey"]
        keys[user] = {"id": key["AccessKeyId"], "secret": key["SecretAccessKey"]}
    print(json.dumps({"port": port, "bucket": BUCKET, **keys}), flush=True)
    sys.stdin.read()  # until the test session closes our stdin (or dies)
    server.stop()


if __name__ == "__main__":
    main()
