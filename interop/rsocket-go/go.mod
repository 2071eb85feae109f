module rsio.interop/rsocket-go

go 1.22

require github.com/rsocket/rsocket-go v0.8.16

require (
	github.com/google/uuid v1.1.2 // indirect
	github.com/gorilla/websocket v1.4.2 // indirect
	github.com/jjeffcaii/reactor-go v0.5.6 // indirect
	github.com/panjf2000/ants/v2 v2.5.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	go.uber.org/atomic v1.7.0 // indirect
)
