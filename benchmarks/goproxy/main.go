// The control of the HTTP proxy benchmark: what ToolHive's proxy is built on, a reverse proxy of
// Go's standard library (net/http/httputil), answers flushed as they come (FlushInterval -1),
// observing nothing. Paths are forwarded as they came, like mcp-otel proxy; stopped by SIGTERM.
//
// The request body is read whole before it is forwarded, as mcp-otel proxy does: streamed as it
// came, about one answer in 200 was cut off here (the transport closed its upstream connection
// mid-answer: "use of closed network connection"), with the Python and the Node upstream alike.
//
//	goproxy -listen 127.0.0.1:PORT -upstream http://127.0.0.1:PORT
package main

import (
	"bytes"
	"flag"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "host:port to serve")
	upstream := flag.String("upstream", "", "the upstream's origin (scheme://host:port)")
	flag.Parse()
	target, err := url.Parse(*upstream)
	if err != nil || target.Host == "" {
		log.Fatalf("goproxy: -upstream must be scheme://host:port, not %q", *upstream)
	}
	origin := &url.URL{Scheme: target.Scheme, Host: target.Host}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(origin)
			if r.In.ContentLength != 0 {
				body, err := io.ReadAll(r.In.Body)
				if err != nil {
					log.Printf("goproxy: reading a request body: %v", err)
				}
				r.Out.Body = io.NopCloser(bytes.NewReader(body))
				r.Out.ContentLength = int64(len(body))
			}
		},
		FlushInterval: -1,
	}
	log.Fatal(http.ListenAndServe(*listen, proxy))
}
