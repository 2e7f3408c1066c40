module github.com/edgequeue/waitingroom/tools

go 1.23.12

require (
	github.com/edgequeue/waitingroom v0.0.0
	github.com/fastly/compute-sdk-go v1.9.0
)

require github.com/golang-jwt/jwt/v5 v5.3.1 // indirect

replace github.com/edgequeue/waitingroom => ../
