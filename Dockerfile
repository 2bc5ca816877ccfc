# Builds every bookonce binary (cmd/...) into one small image; docker-compose.yml
# picks the binary per service with `command:`.

FROM golang:1.27 AS build
# The base image may ship an older patch release; pin the toolchain go.mod wants.
ENV GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0
WORKDIR /src
# Module download gets its own layer so source edits don't refetch dependencies.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# timetzdata embeds the zoneinfo database: the distroless runtime has no
# /usr/share/zoneinfo and we load Europe/Berlin (BOOKONCE_TIMEZONE).
RUN --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -tags timetzdata -ldflags='-s -w' -o /out/ ./cmd/...

# static + nonroot: no shell, no curl, CA certificates included, uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
# Writable home, so the default relative BOOKONCE_DATA_DIR (.data) works.
WORKDIR /home/nonroot
USER nonroot:nonroot
EXPOSE 8080 8081 8082
