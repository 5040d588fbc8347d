# `fsmlog watch` as a container (docs/watch.md): one static binary on an empty image, run as a
# non-root user; no shell, no package manager, nothing else to patch. TLS roots are built into
# the binary (ureq with webpki-roots), so the empty image needs no certificate bundle.
#
#   docker build --build-arg FSMLOG_COMMIT=$(git rev-parse --short HEAD) -t fsmlog .
#   docker run -v fsmlog-history:/var/lib/fsmlog -e METALCTL_API_URL=… -e METALCTL_HMAC=… fsmlog
FROM rust:1.95-alpine AS build
# musl is Alpine's libc, so the release build is static; gcc builds ring's and mimalloc's C.
RUN apk add --no-cache musl-dev gcc
WORKDIR /src
# The context holds no .git (.dockerignore): `fsmlog --version` names the commit given here.
ARG FSMLOG_COMMIT=""
COPY . .
RUN cargo build --release --locked --bin fsmlog \
    && install -D -m 0755 target/release/fsmlog /out/fsmlog \
    && install -d -m 0775 -o 65532 -g 65532 /out/var/lib/fsmlog

FROM scratch
COPY --from=build /out/ /
# The uid and gid distroless images call `nonroot`; the Deployment's securityContext says the
# same, and its volume is mounted group-writable for it (fsGroup).
USER 65532:65532
VOLUME /var/lib/fsmlog
EXPOSE 9119
ENTRYPOINT ["/fsmlog"]
CMD ["watch", "--into", "/var/lib/fsmlog", "--listen", "0.0.0.0:9119", "--log-format", "json"]
