#!/usr/bin/env bash
# Regenerates the held-out log suite: the fleet's event script and truth, then every file set through its
# real logging library, then truth.json. Needs root (rsyslog's senders run in UTS namespaces of their own)
# and these Debian packages:
#   default-jdk-headless liblogback-java libslf4j-java liblog4j2-java python3-structlog python3-loguru ruby rsyslog
#   faketime util-linux, and node 20 with npm and Go on PATH
# plus npm packages (node/package-lock.json: pino, winston, bunyan, log4js) and Go modules (gen/go.sum: zap, zerolog,
# logrus).
# Takes about three minutes, most of it rsyslog (two logger processes an event).
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

apt_packages="default-jdk-headless liblogback-java libslf4j-java liblog4j2-java python3-structlog python3-loguru ruby rsyslog faketime"
installed=$(dpkg-query -W -f='${Status}\n' $apt_packages 2>/dev/null | grep -c '^install ok installed' || true)
if [ "$installed" != "$(echo $apt_packages | wc -w)" ]; then
  apt-get install -y -q $apt_packages
fi

(cd gen && go run ./cmd/fleet -out ../script)
rm -rf logs && mkdir logs

# Go: zap, zerolog, slog; logrus (its own wording: wording/go-logrus.md)
(cd gen && go run ./cmd/golog -script ../script -out ../logs)
(cd gen && go run ./cmd/logrus -script ../script -out ../logs)

# Java: logback (MDC pattern), Spring Boot 3 console (logback) behind docker compose, log4j2 behind kubectl, JUL
cp=/usr/share/java/logback-classic.jar:/usr/share/java/logback-core.jar:/usr/share/java/slf4j-api.jar
cp=$cp:/usr/share/java/log4j-api.jar:/usr/share/java/log4j-core.jar
javac -d "$tmp/java" -cp "$cp" java/src/heldout/*.java
for m in logback spring-boot jul; do
  java -Duser.timezone=UTC -cp "$tmp/java:$cp" heldout.Main "$m" script "logs/$m"
done
mkdir -p "$tmp/log4j2"
java -Duser.timezone=UTC -Dlog4j2.Clock=heldout.VirtualClock -Dlog4j.configurationFile=java/log4j2.xml \
  -Dheldout.out="$tmp/log4j2" -cp "$tmp/java:$cp" heldout.Main log4j2 script "$tmp/log4j2"
mkdir -p logs/log4j2
mv "$tmp/log4j2/manifest.json" logs/log4j2/
(cd gen && go run ./cmd/ship -container worker -out "$here/logs/log4j2/kubectl-logs.log" "$tmp"/log4j2/*.log)

# Node: pino, winston (behind docker compose), bunyan
(cd node && npm ci --silent --no-audit --no-fund)
for m in pino winston bunyan; do node node/index.js "$m" script "logs/$m"; done
TZ=UTC node node/log4js.js script logs/log4js

# Python (Debian's interpreter, for Debian's structlog): logging, structlog console and JSON
for m in logging structlog-console structlog-json; do /usr/bin/python3 python/fleetlog.py "$m" script "logs/$m"; done
TZ=UTC /usr/bin/python3 python/loguru_fleet.py script logs/loguru

# Ruby Logger (a forked process per worker process)
TZ=UTC ruby ruby/fleet_logger.rb script logs/ruby-logger

# syslog: a private rsyslogd fed by logger (RFC 3164 and RFC 5424 files)
/usr/bin/python3 syslog/run.py script logs/_syslog

(cd gen && go run ./cmd/assemble -script ../script -logs ../logs -out ../truth.json)
du -sh logs
