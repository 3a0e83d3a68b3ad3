# Web servers for the tests of images at URLs: source after lib.sh.
#   start_nginx DOCROOT        nginx on 127.0.0.1: HTTP on $HTTP_PORT,
#                              HTTPS and HTTP/2 on $HTTPS_PORT with a
#                              certificate made here ($T/http/ca.pem);
#                              every request in $NGINX_LOG; files under
#                              /private/ need "Authorization: Bearer s3cret"
#   start_faulty MODE FILE     tests/integration/faulty_http.py on
#                              $FAULTY_PORT (its modes are listed there);
#                              stop_faulty stops it, stop_servers all
# Whatever they start is stopped when the test ends, however it ends.

_servers=()
stop_servers() {
	local pid
	for pid in "${_servers[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	_servers=()
}
# lib.sh's cleanup runs at exit; the servers go first.
trap 'stop_servers; cleanup' EXIT

# settle_log FILE: until FILE has not grown for 0.2 s (at most 5 s).
settle_log() {
	local before after
	for _ in $(seq 25); do
		before=$(stat -c %s "$1")
		sleep 0.2
		after=$(stat -c %s "$1")
		[ "$before" = "$after" ] && return 0
	done
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT PID: until something listens on PORT, or PID died.
wait_port() {
	for _ in $(seq 100); do
		kill -0 "$2" 2>/dev/null || fail "server on port $1 exited"
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	fail "nothing listens on port $1"
}

start_nginx() {
	local root=$1 d=$T/http
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1,DNS:localhost \
		-keyout "$d/key.pem" -out "$d/ca.pem" 2>/dev/null ||
		fail "openssl cannot make a certificate"
	HTTP_PORT=$(free_port)
	HTTPS_PORT=$(free_port)
	NGINX_LOG=$d/access.log
	# One process, in the foreground, as the user running the test.
	cat >"$d/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 512; }
http {
	log_format ranges '\$request_method \$uri "\$http_range" \$status \$body_bytes_sent \$server_protocol';
	access_log $NGINX_LOG ranges;
	client_body_temp_path $d/body;
	proxy_temp_path $d/proxy;
	fastcgi_temp_path $d/fastcgi;
	uwsgi_temp_path $d/uwsgi;
	scgi_temp_path $d/scgi;
	keepalive_requests 100000;
	server {
		listen 127.0.0.1:$HTTP_PORT;
		listen 127.0.0.1:$HTTPS_PORT ssl http2;
		ssl_certificate $d/ca.pem;
		ssl_certificate_key $d/key.pem;
		root $root;
		location /private/ {
			if (\$http_authorization != "Bearer s3cret") { return 401; }
		}
	}
}
CONF
	nginx -c "$d/nginx.conf" -p "$d" 2>>"$d/error.log" &
	_servers+=($!)
	wait_port "$HTTP_PORT" $!
	wait_port "$HTTPS_PORT" $!
}

start_faulty() {
	FAULTY_PORT=$(free_port)
	python3 "$HERE/faulty_http.py" --port "$FAULTY_PORT" --mode "$1" --file "$2" \
		--log "$T/faulty.log" &
	FAULTY_PID=$!
	_servers+=($!)
	wait_port "$FAULTY_PORT" $!
}

stop_faulty() {
	kill "$FAULTY_PID" 2>/dev/null || true
	wait "$FAULTY_PID" 2>/dev/null || true
}

# start_registry MODE: docker-registry (Debian's OCI distribution
# registry) on $REGISTRY_PORT over HTTPS with the certificate of
# start_nginx (call that first), storing under $T/registry; MODE:
#   open     no authentication
#   basic    htpasswd: user alice, password wonderland
#   token    token authentication: tokens from token_server.py on
#            $TOKEN_PORT, anonymous pulls ($TOKEN_LOG logs each request)
#   token-basic  the same, tokens only for alice:wonderland
# TOKEN_LIFETIME (seconds) bounds the tokens' life.
start_registry() {
	local d=$T/registry auth=""
	mkdir -p "$d"
	REGISTRY_PORT=$(free_port)
	case $1 in
	basic)
		htpasswd -Bbc "$d/htpasswd" alice wonderland 2>/dev/null || fail "htpasswd"
		auth="auth:
  htpasswd:
    realm: erofskit-test
    path: $d/htpasswd"
		;;
	token | token-basic)
		TOKEN_PORT=$(free_port)
		TOKEN_LOG=$T/token.log
		: >"$TOKEN_LOG"
		local users=()
		[ "$1" = token-basic ] && users=(--user alice --password wonderland)
		python3 "$HERE/token_server.py" --port "$TOKEN_PORT" --key "$T/http/key.pem" \
			--cert "$T/http/ca.pem" --log "$TOKEN_LOG" --lifetime "${TOKEN_LIFETIME:-600}" \
			"${users[@]}" &
		_servers+=($!)
		wait_port "$TOKEN_PORT" $!
		auth="auth:
  token:
    realm: http://127.0.0.1:$TOKEN_PORT/token
    service: erofskit-test
    issuer: erofskit-token
    rootcertbundle: $T/http/ca.pem"
		;;
	esac
	cat >"$d/config.yml" <<CONF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $d/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$REGISTRY_PORT
  tls:
    certificate: $T/http/ca.pem
    key: $T/http/key.pem
$auth
CONF
	docker-registry serve "$d/config.yml" >>"$d/log" 2>&1 &
	REGISTRY_PID=$!
	_servers+=($!)
	wait_port "$REGISTRY_PORT" $!
}

stop_registry() {
	kill "$REGISTRY_PID" 2>/dev/null || true
	wait "$REGISTRY_PID" 2>/dev/null || true
}
