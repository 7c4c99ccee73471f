# trace_processor_shell streaming a trace from http:// and https:// URLs:
# a loopback python3 server (plain, and TLS with a test CA made here by
# openssl) serving a JSON trace, its gzip, a chunked body, a close-delimited
# body and redirects; certificate, host-name, status and connection errors.
. tests/lib.sh

for tool in python3 openssl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skip all "$tool is not installed"
		exit 0
	fi
done

tps() { "$TRACEBOX" trace_processor_shell "$@"; }

mkdir -p "$TMP/www"
cat >"$TMP/www/t.json" <<'JSON'
{"traceEvents":[
 {"ph":"X","name":"outer","cat":"c","ts":1,"dur":10,"pid":1,"tid":2},
 {"ph":"X","name":"inner","cat":"c","ts":2,"dur":3,"pid":1,"tid":2}
]}
JSON
gzip -c "$TMP/www/t.json" >"$TMP/www/t.json.gz"
q='select name, ts, dur, depth from slice order by ts'
expected='"name","ts","dur","depth"
"outer",1000,10000,0
"inner",2000,3000,1'

# A test CA; a server certificate for localhost and 127.0.0.1 signed by it,
# and one for another name only.
ssl() { openssl "$@" >>"$TMP/openssl.log" 2>&1; }
mkcert() { # NAME SAN [-newkey's arguments: default rsa:2048]
	n=$1 san=$2
	shift 2
	[ $# -gt 0 ] || set -- rsa:2048
	ssl req -newkey "$@" -nodes -keyout "$TMP/$n.key" -subj "/CN=$n" -out "$TMP/$n.csr" &&
		printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' "$san" \
			>"$TMP/$n.ext" &&
		ssl x509 -req -in "$TMP/$n.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" -CAcreateserial \
			-days 2 -sha256 -extfile "$TMP/$n.ext" -out "$TMP/$n.pem"
}
if ! ssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/ca.key" -out "$TMP/ca.pem" -days 2 \
	-subj "/CN=tracebox test CA" -addext basicConstraints=critical,CA:TRUE \
	-addext keyUsage=critical,keyCertSign,cRLSign ||
	! mkcert server 'DNS:localhost,IP:127.0.0.1' || ! mkcert other 'DNS:other.example' ||
	! mkcert ec256 'IP:127.0.0.1' ec -pkeyopt ec_paramgen_curve:P-256 ||
	! mkcert ec384 'IP:127.0.0.1' ec -pkeyopt ec_paramgen_curve:P-384; then
	skip all "openssl cannot make a test CA: $(tail -3 "$TMP/openssl.log")"
	exit 0
fi

# The server: GET /FILE (Content-Length), /chunked/FILE, /close/FILE (no
# length, ends at close), /redirect/N/PATH (302 to /redirect/N-1/PATH, then
# PATH), /abs/PATH (301 to an absolute URL on the same server). It binds
# port 0 on HOST and writes the port it got to PORTFILE.
cat >"$TMP/srv.py" <<'PY'
import http.server, os, ssl, sys, threading
host, root, portfile, cert, key = sys.argv[1:6]
ciphers, curve = (sys.argv[6:8] + ["-", "-"])[:2]

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def body(self, rel):
        p = os.path.join(root, rel)
        if not rel or ".." in rel or not os.path.isfile(p): return None
        with open(p, "rb") as f: return f.read()
    def send_body(self, data):
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        path = self.path.lstrip("/")
        kind, _, rest = path.partition("/")
        if kind == "redirect":
            n, _, target = rest.partition("/")
            loc = "/" + target if int(n) <= 1 else "/redirect/%d/%s" % (int(n) - 1, target)
            self.send_response(302); self.send_header("Location", loc)
            self.send_header("Content-Length", "0"); self.end_headers(); return
        if kind == "abs":
            scheme = "https" if cert != "-" else "http"
            self.send_response(301)
            self.send_header("Location", "%s://localhost:%d/%s" % (scheme, self.server.server_port, rest))
            self.send_header("Content-Length", "0"); self.end_headers(); return
        data = self.body(rest if kind in ("chunked", "close") else path)
        if data is None:
            self.send_response(404, "Not Found"); self.send_header("Content-Length", "0")
            self.end_headers(); return
        if kind == "chunked":
            self.send_response(200); self.send_header("Transfer-Encoding", "chunked"); self.end_headers()
            for i in range(0, len(data), 7):
                piece = data[i:i + 7]
                self.wfile.write(b"%x;n=%d\r\n%s\r\n" % (len(piece), i, piece))
            self.wfile.write(b"0\r\nX-Trailer: 1\r\n\r\n")
        elif kind == "close":
            self.send_response(200); self.send_header("Connection", "close"); self.end_headers()
            self.wfile.write(data); self.close_connection = True
        else:
            self.send_body(data)

class S(http.server.ThreadingHTTPServer):
    daemon_threads = True
    address_family = __import__("socket").AF_INET6 if ":" in host else __import__("socket").AF_INET

srv = S((host, 0), H)
if cert != "-":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    if ciphers != "-":
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_ciphers(ciphers)
    if curve != "-":
        ctx.set_ecdh_curve(curve)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(portfile + ".tmp", "w") as f: f.write(str(srv.server_port))
os.rename(portfile + ".tmp", portfile)
threading.Timer(300, lambda: os._exit(0)).start()  # bounded even if never killed
srv.serve_forever()
PY

# start NAME HOST CERT KEY [CIPHERS CURVE]: run a server in the background
# (TLS 1.2 with only CIPHERS, OpenSSL's names, and ECDHE on CURVE when
# given); sets PORT_<NAME>.
start() {
	timeout 300 python3 "$TMP/srv.py" "$2" "$TMP/www" "$TMP/$1.port" "$3" "$4" ${5:-} ${6:-} \
		2>"$TMP/$1.log" &
	at_exit "kill $! 2>/dev/null"
	i=0
	while [ ! -s "$TMP/$1.port" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -s "$TMP/$1.port" ] || return 1
	eval "PORT_$1=\$(cat \"\$TMP/$1.port\")"
}
if ! start plain 127.0.0.1 - - || ! start tls 127.0.0.1 "$TMP/server.pem" "$TMP/server.key" ||
	! start other 127.0.0.1 "$TMP/other.pem" "$TMP/other.key"; then
	fail server-start "$(cat "$TMP"/*.log)"
	exit 0
fi
H=http://127.0.0.1:$PORT_plain
S=https://127.0.0.1:$PORT_tls

# -- plain HTTP
expect_exit http 0 tps query "$H/t.json" "$q"
expect_eq http-csv "$expected" "$(cat "$TMP/out")"
grep -q '^Trace loaded: 0.00 MB in ' "$TMP/err" && pass http-loaded-line || fail http-loaded-line "$(cat "$TMP/err")"
expect_exit http-gzip 0 tps query "$H/t.json.gz" "$q"
expect_eq http-gzip-csv "$expected" "$(cat "$TMP/out")"
expect_exit http-chunked 0 tps query "$H/chunked/t.json" "$q"
expect_eq http-chunked-csv "$expected" "$(cat "$TMP/out")"
expect_exit http-chunked-gzip 0 tps query "$H/chunked/t.json.gz" "$q"
expect_eq http-chunked-gzip-csv "$expected" "$(cat "$TMP/out")"
expect_exit http-close 0 tps query "$H/close/t.json" "$q"
expect_eq http-close-csv "$expected" "$(cat "$TMP/out")"
expect_exit http-redirect 0 tps query "$H/redirect/3/t.json" "$q"
expect_eq http-redirect-csv "$expected" "$(cat "$TMP/out")"
expect_exit http-redirect-loop 1 tps query "$H/redirect/20/t.json" "$q"
grep -q 'more than [0-9]* redirects' "$TMP/err" && pass http-redirect-loop-msg || fail http-redirect-loop-msg "$(cat "$TMP/err")"
expect_exit http-404 1 tps query "$H/missing.json" "$q"
expect_eq http-404-msg "trace_processor_shell: HTTP 404 Not Found from '$H/missing.json'" "$(cat "$TMP/err")"

# -- HTTPS: trusted through SSL_CERT_FILE, by IP and by name
export SSL_CERT_FILE="$TMP/ca.pem"
expect_exit https 0 tps query "$S/t.json" "$q"
expect_eq https-csv "$expected" "$(cat "$TMP/out")"
expect_exit https-localhost 0 tps query "https://localhost:$PORT_tls/chunked/t.json.gz" "$q"
expect_eq https-localhost-csv "$expected" "$(cat "$TMP/out")"
expect_exit https-close 0 tps query "$S/close/t.json" "$q"
expect_eq https-close-csv "$expected" "$(cat "$TMP/out")"
expect_exit https-redirect-abs 0 tps query "$S/abs/redirect/2/t.json" "$q"
expect_eq https-redirect-abs-csv "$expected" "$(cat "$TMP/out")"
expect_exit http-to-https-404 1 tps query "$S/nothing" "$q"
expect_eq https-404-msg "trace_processor_shell: HTTP 404 Not Found from '$S/nothing'" "$(cat "$TMP/err")"

# The key exchanges, ciphers, curves and certificate keys servers use: one
# server each, TLS 1.2 limited to that suite (name:certificate:suite:curve).
for c in ecdsa_p256_aes128gcm:ec256:ECDHE-ECDSA-AES128-GCM-SHA256:prime256v1 \
	ecdsa_p384_chacha20:ec384:ECDHE-ECDSA-CHACHA20-POLY1305:secp384r1 \
	ecdsa_p521_aes256cbc:ec256:ECDHE-ECDSA-AES256-SHA384:secp521r1 \
	rsa_aes256gcm:server:ECDHE-RSA-AES256-GCM-SHA384:- \
	rsa_chacha20:server:ECDHE-RSA-CHACHA20-POLY1305:- \
	rsa_aes128cbc_sha1:server:ECDHE-RSA-AES128-SHA:- \
	rsa_kx_aes128gcm:server:AES128-GCM-SHA256:-; do
	ifs=$IFS IFS=:
	# shellcheck disable=SC2086
	set -- $c
	IFS=$ifs
	if ! start "$1" 127.0.0.1 "$TMP/$2.pem" "$TMP/$2.key" "$3" "$4"; then
		fail "https-$1" "cannot start a server for $3: $(cat "$TMP/$1.log")"
		continue
	fi
	eval "port=\$PORT_$1"
	expect_exit "https-$1" 0 tps query "https://127.0.0.1:$port/t.json" "$q"
	expect_eq "https-$1-csv" "$expected" "$(cat "$TMP/out")"
done

# A certificate for another name: wrong host, by name and by IP.
expect_exit https-wrong-name 1 tps query "https://localhost:$PORT_other/t.json" "$q"
grep -q "^trace_processor_shell: certificate verification failed for 'localhost': .*CN" "$TMP/err" &&
	pass https-wrong-name-msg || fail https-wrong-name-msg "$(cat "$TMP/err")"
expect_exit https-wrong-ip 1 tps query "https://127.0.0.1:$PORT_other/t.json" "$q"
grep -q "^trace_processor_shell: certificate verification failed for '127.0.0.1': " "$TMP/err" &&
	pass https-wrong-ip-msg || fail https-wrong-ip-msg "$(cat "$TMP/err")"

# The test CA not trusted: the system bundle (or another CA) is used.
SSL_CERT_FILE="$TMP/other.pem" expect_exit https-untrusted 1 tps query "$S/t.json" "$q"
grep -q "^trace_processor_shell: certificate verification failed for '127.0.0.1': .*not correctly signed" "$TMP/err" &&
	pass https-untrusted-msg || fail https-untrusted-msg "$(cat "$TMP/err")"
if [ -f /etc/ssl/certs/ca-certificates.crt ] || [ -f /etc/pki/tls/certs/ca-bundle.crt ] || [ -f /etc/ssl/cert.pem ]; then
	SSL_CERT_FILE= expect_exit https-system-ca 1 tps query "$S/t.json" "$q"
	grep -q "^trace_processor_shell: certificate verification failed for '127.0.0.1': " "$TMP/err" &&
		pass https-system-ca-msg || fail https-system-ca-msg "$(cat "$TMP/err")"
else
	skip https-system-ca "no system CA bundle"
fi
SSL_CERT_FILE="$TMP/none.pem" expect_exit https-no-ca-file 1 tps query "$S/t.json" "$q"
grep -q "cannot load CA certificates from '$TMP/none.pem': No such file or directory" "$TMP/err" &&
	pass https-no-ca-file-msg || fail https-no-ca-file-msg "$(cat "$TMP/err")"

# TLS to a plain server, plain to a TLS server.
expect_exit https-to-plain 1 tps query "https://127.0.0.1:$PORT_plain/t.json" "$q"
grep -q "TLS handshake with 127.0.0.1:$PORT_plain failed" "$TMP/err" &&
	pass https-to-plain-msg || fail https-to-plain-msg "$(cat "$TMP/err")"

# -- connection errors
dead=$(free_port)
expect_exit refused 1 tps query "http://127.0.0.1:$dead/t.json" "$q"
expect_eq refused-msg "trace_processor_shell: cannot connect to 127.0.0.1:$dead: Connection refused" "$(cat "$TMP/err")"
expect_exit refused-v6 1 tps query "https://[::1]:$dead/t.json" "$q"
grep -q "^trace_processor_shell: cannot connect to \[::1\]:$dead: " "$TMP/err" &&
	pass refused-v6-msg || fail refused-v6-msg "$(cat "$TMP/err")"
expect_exit unresolvable 1 tps query "http://no-such-host.invalid/t.json" "$q"
grep -q "^trace_processor_shell: cannot resolve 'no-such-host.invalid': " "$TMP/err" &&
	pass unresolvable-msg || fail unresolvable-msg "$(cat "$TMP/err")"
expect_exit bad-url 1 tps query "http://[::1/t.json" "$q"
grep -q "unterminated" "$TMP/err" && pass bad-url-msg || fail bad-url-msg "$(cat "$TMP/err")"

# -- IPv6 loopback, when the machine has it
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null &&
	start v6 ::1 - -; then
	expect_exit http-v6 0 tps query "http://[::1]:$PORT_v6/redirect/1/t.json" "$q"
	expect_eq http-v6-csv "$expected" "$(cat "$TMP/out")"
else
	skip http-v6 "no IPv6 loopback"
fi
