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

# Ports come from below the kernel's ephemeral range: every test running
# beside this one draws its outgoing connections' ports from that range,
# and one can take a port there between bind(0) handing it out and the
# server binding it (it.registry's server once exited so). Below the
# range only another test's server can take it; launch then starts the
# server again on new ports.
# pick_ports N: N distinct free ports on 127.0.0.1, space-separated.
pick_ports() {
	python3 - "$1" <<'PY'
import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
ports = []
while len(ports) < int(sys.argv[1]):
    port = random.randrange(max(1024, low - 16384), low)
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
    if port not in ports:
        ports.append(port)
print(*ports)
PY
}

free_port() {
	pick_ports 1
}

# listens PORT PID: PID holds the socket listening on 127.0.0.1:PORT (not
# merely something: another test's server may hold a port taken meanwhile).
listens() {
	local inode
	for inode in $(awk -v at="$(printf '0100007F:%04X' "$1")" \
		'$2 == at && $4 == "0A" { print $10 }' /proc/net/tcp); do
		find "/proc/$2/fd" -lname "socket:\[$inode\]" 2>/dev/null | grep -q . && return 0
	done
	return 1
}

# wait_port PORT PID: until PID listens on PORT (0), or PID exited (1).
wait_port() {
	for _ in $(seq 100); do
		kill -0 "$2" 2>/dev/null || return 1
		listens "$1" "$2" && return 0
		sleep 0.05
	done
	fail "nothing listens on port $1"
}

# launch LOG UP [ARG...]: UP ARG... picks its ports (_ports), writes its configuration and
# starts its server in the background (_pid), its errors going to LOG.
# The server is up once each port listens. One that exits first because a
# port was taken meanwhile is launched again on new ports (five tries);
# one that exits for another reason fails the test with LOG's last lines.
launch() {
	local log=$1 up=$2 port listening
	shift 2
	for _ in 1 2 3 4 5; do
		: >"$log"
		"$up" "$@"
		_servers+=("$_pid")
		listening=1
		for port in "${_ports[@]}"; do
			wait_port "$port" "$_pid" || { listening=0; break; }
		done
		[ $listening = 1 ] && return 0
		wait "$_pid" 2>/dev/null || true
		grep -qi "address already in use" "$log" ||
			fail "$up: the server exited: $(tail -n 5 "$log")"
	done
	fail "$up: ports in use five times over: $(tail -n 5 "$log")"
}

start_nginx() {
	local d=$T/http
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1,DNS:localhost \
		-keyout "$d/key.pem" -out "$d/ca.pem" 2>/dev/null ||
		fail "openssl cannot make a certificate"
	NGINX_LOG=$d/access.log
	launch "$d/error.log" nginx_up "$1"
}

nginx_up() {
	local root=$1 d=$T/http
	read -r HTTP_PORT HTTPS_PORT < <(pick_ports 2)
	_ports=("$HTTP_PORT" "$HTTPS_PORT")
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
	_pid=$!
}

start_faulty() {
	launch "$T/faulty.err" faulty_up "$@"
	FAULTY_PID=$_pid
}

faulty_up() {
	FAULTY_PORT=$(free_port)
	_ports=("$FAULTY_PORT")
	python3 "$HERE/faulty_http.py" --port "$FAULTY_PORT" --mode "$1" --file "$2" \
		--log "$T/faulty.log" 2>>"$T/faulty.err" &
	_pid=$!
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
# and "http" after MODE: plain HTTP instead.
# TOKEN_LIFETIME (seconds) bounds the tokens' life.
start_registry() {
	local d=$T/registry auth="" tls="  tls:
    certificate: $T/http/ca.pem
    key: $T/http/key.pem"
	[ "${2:-}" = http ] && tls=""
	mkdir -p "$d"
	case $1 in
	basic)
		htpasswd -Bbc "$d/htpasswd" alice wonderland 2>/dev/null || fail "htpasswd"
		auth="auth:
  htpasswd:
    realm: erofskit-test
    path: $d/htpasswd"
		;;
	token | token-basic)
		TOKEN_LOG=$T/token.log
		: >"$TOKEN_LOG"
		launch "$T/token.err" token_up "$1"
		auth="auth:
  token:
    realm: http://127.0.0.1:$TOKEN_PORT/token
    service: erofskit-test
    issuer: erofskit-token
    rootcertbundle: $T/http/ca.pem"
		;;
	esac
	launch "$d/log" registry_up "$auth" "$tls"
	REGISTRY_PID=$_pid
}

token_up() {
	local users=()
	[ "$1" = token-basic ] && users=(--user alice --password wonderland)
	TOKEN_PORT=$(free_port)
	_ports=("$TOKEN_PORT")
	python3 "$HERE/token_server.py" --port "$TOKEN_PORT" --key "$T/http/key.pem" \
		--cert "$T/http/ca.pem" --log "$TOKEN_LOG" --lifetime "${TOKEN_LIFETIME:-600}" \
		"${users[@]}" 2>>"$T/token.err" &
	_pid=$!
}

registry_up() {
	local d=$T/registry
	REGISTRY_PORT=$(free_port)
	_ports=("$REGISTRY_PORT")
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
$2
$1
CONF
	docker-registry serve "$d/config.yml" >>"$d/log" 2>&1 &
	_pid=$!
}

stop_registry() {
	kill "$REGISTRY_PID" 2>/dev/null || true
	wait "$REGISTRY_PID" 2>/dev/null || true
}
