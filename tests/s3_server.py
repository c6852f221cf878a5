"""A real S3 server on loopback for the tests: moto in server mode (its own process), with IAM authentication on,
so a wrong key is refused the way AWS refuses it. Never a mock of s3fs or of zarr."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

BUCKET = "laya-cache"
ALLOW_S3 = json.dumps({"Version": "2012-10-17",
                       "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]})


@dataclass
class S3Server:
    endpoint: str
    key: str
    secret: str
    bucket: str = BUCKET

    def env(self, key: str | None = None) -> dict[str, str]:
        """The standard AWS variables a client reads (laya takes credentials and endpoint only from these)."""
        return {"AWS_ACCESS_KEY_ID": key or self.key, "AWS_SECRET_ACCESS_KEY": self.secret,
                "AWS_ENDPOINT_URL": self.endpoint, "AWS_DEFAULT_REGION": "us-east-1"}

    def url(self, *parts: str) -> str:
        return "/".join([f"s3://{self.bucket}", *parts])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_s3_server() -> tuple[subprocess.Popen, S3Server]:
    """Start moto's server on a free loopback port; create a user with S3 rights and the bucket."""
    import boto3

    port = _free_port()
    # the first 3 requests may go unsigned: they create the user whose key every later request must carry
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"}
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                raise RuntimeError(f"moto server did not start on 127.0.0.1:{port}") from None
            time.sleep(0.05)
    endpoint = f"http://127.0.0.1:{port}"
    anonymous = {"endpoint_url": endpoint, "region_name": "us-east-1", "aws_access_key_id": "setup",
                 "aws_secret_access_key": "setup"}
    iam = boto3.client("iam", **anonymous)
    iam.create_user(UserName="laya")
    key = iam.create_access_key(UserName="laya")["AccessKey"]
    iam.put_user_policy(UserName="laya", PolicyName="s3", PolicyDocument=ALLOW_S3)
    server = S3Server(endpoint, key["AccessKeyId"], key["SecretAccessKey"])
    boto3.client("s3", **{**anonymous, "aws_access_key_id": server.key,
                          "aws_secret_access_key": server.secret}).create_bucket(Bucket=server.bucket)
    return proc, server
