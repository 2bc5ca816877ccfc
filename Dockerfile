# Builds the bookonce service binaries (worker, gateway, calendar, payments)
# and the starter CLI into one small image. docker-compose.yml and
# deploy/k8s pick the binary per service with `entrypoint:` / `command:`.
# cmd/dev, cmd/devserver and cmd/chaos are not built: they embed the
# Temporal server (minutes of compile time, tens of MB) that production
# never runs from this image.

# Pinned by version tag; no digest is published for it here, so pin the
# digest in your own registry mirror if you need a reproducible base.
FROM golang:1.27.3-bookworm AS build
# The toolchain go.mod wants, even should the tag move to another patch.
ENV GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0
WORKDIR /src
# Module download gets its own layer so source edits don't refetch dependencies.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# timetzdata embeds the zoneinfo database: the distroless runtime has no
# /usr/share/zoneinfo and we load Europe/Berlin (BOOKONCE_TIMEZONE).
RUN --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -tags timetzdata -ldflags='-s -w' -o /out/ \
      ./cmd/worker ./cmd/gateway ./cmd/calendar ./cmd/payments ./cmd/starter

# static + nonroot: no shell, no curl, CA certificates included, uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
# Writable home for a relative BOOKONCE_DATA_DIR (.data); with DATABASE_URL
# set nothing is written there, so the root file system may be read-only.
WORKDIR /home/nonroot
USER 65532:65532
EXPOSE 8080 8081 8082 8083 8084
# The image runs the CLI by default (`docker run IMAGE tenants list`);
# each service names its binary as the entrypoint.
ENTRYPOINT ["/usr/local/bin/starter"]
CMD ["--help"]
