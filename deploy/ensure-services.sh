#!/usr/bin/env bash
# Make sure the PostgreSQL and Redis the test suite talks to are reachable. Where they are
# not and Docker is, start them from deploy/compose.test-services.yaml (the images of
# deploy/compose.yaml, set up the way the test settings expect); otherwise say what to start.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

pg_host=${BIBI_PG_HOST:-127.0.0.1}
pg_port=${BIBI_PG_PORT:-5432}
redis_host=${BIBI_REDIS_HOST:-127.0.0.1}
redis_port=${BIBI_REDIS_PORT:-6379}

reachable() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

both_up() { reachable "$pg_host" "$pg_port" && reachable "$redis_host" "$redis_port"; }

if both_up; then
    exit 0
fi

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    echo "PostgreSQL or Redis is not reachable: starting them with docker compose (deploy/compose.test-services.yaml)"
    docker compose -f "$here/compose.test-services.yaml" up -d postgres redis
    for _ in $(seq 1 60); do
        both_up && exit 0
        sleep 1
    done
    echo "docker compose started, but PostgreSQL ($pg_host:$pg_port) or Redis ($redis_host:$redis_port) still does not answer" >&2
    exit 1
fi

cat >&2 <<MSG
The test suite needs a real PostgreSQL and Redis, and Docker is not available to start them.
Start them, then run 'make test' again:
  - PostgreSQL on $pg_host:$pg_port, user 'postgres' allowed to create databases (trust auth), database 'test'
      e.g. pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql) main start
  - Redis on $redis_host:$redis_port
      e.g. redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
Or point DATABASE_URL and REDIS_URL at servers you have.
MSG
exit 1
