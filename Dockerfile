# LakeSoul-Go server image.
#
#   docker build -t lakesoul .
#   docker run -p 5433:5433 -p 9187:9187 -e LAKESOUL_ADMIN_PASSWORD=secret -v lakesoul:/var/lib/lakesoul lakesoul
#
# With no LAKESOUL_CATALOG_URL the server runs the embedded default: a
# private PostgreSQL cluster (Debian's server binaries, in this image) and
# the warehouse, both in the volume /var/lib/lakesoul. Every serve flag is
# also an environment variable (README: Configuration), e.g.
# LAKESOUL_CATALOG_URL, LAKESOUL_WAREHOUSE, AWS_ENDPOINT_URL, AWS_REGION.
# The admin role is lakesoul; without LAKESOUL_ADMIN_PASSWORD its password
# is generated at first start, logged once and kept in
# /var/lib/lakesoul/admin-password.
#
# tests/image_test.go runs the steps of both stages on the host where no
# Docker engine is available, and builds and runs the image where one is.

ARG GO_VERSION=1.26
ARG DEBIAN_RELEASE=bookworm

FROM golang:${GO_VERSION}-${DEBIAN_RELEASE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# cgo: DuckDB is linked in.
RUN CGO_ENABLED=1 go build -buildvcs=false -ldflags "-s -w -X main.version=${VERSION}" -o /out/lakesoul ./cmd/lakesoul

FROM debian:${DEBIAN_RELEASE}-slim
# PostgreSQL's server binaries (initdb, postgres) for the embedded catalog,
# without the cluster Debian's package would create and start.
RUN mkdir -p /etc/postgresql-common/createcluster.d \
	&& echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.d/lakesoul.conf \
	&& apt-get update \
	&& apt-get install -y --no-install-recommends postgresql ca-certificates tzdata \
	&& rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/lakesoul --shell /usr/sbin/nologin lakesoul \
	&& mkdir -p /var/lib/lakesoul && chown lakesoul:lakesoul /var/lib/lakesoul && chmod 0700 /var/lib/lakesoul
COPY --from=build /out/lakesoul /usr/local/bin/lakesoul
ENV LAKESOUL_DATA_DIR=/var/lib/lakesoul \
	LAKESOUL_LISTEN=0.0.0.0:5433 \
	LAKESOUL_METRICS_LISTEN=0.0.0.0:9187
USER lakesoul:lakesoul
WORKDIR /var/lib/lakesoul
VOLUME ["/var/lib/lakesoul"]
EXPOSE 5433 9187
HEALTHCHECK --interval=10s --timeout=6s --start-period=60s --retries=3 CMD ["lakesoul", "healthcheck"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["lakesoul"]
CMD ["serve"]
