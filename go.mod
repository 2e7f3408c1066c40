module github.com/edgequeue/waitingroom

go 1.23.12

require (
	github.com/fastly/compute-sdk-go v1.9.0
	github.com/golang-jwt/jwt/v5 v5.3.1
)
