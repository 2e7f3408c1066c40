module github.com/edgequeue/waitingroom/tools

go 1.23.12

require github.com/edgequeue/waitingroom v0.0.0

replace github.com/edgequeue/waitingroom => ../
