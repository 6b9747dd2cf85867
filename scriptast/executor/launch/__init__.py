"""The launch kinds, one a way a job runs: a batch job, a step of a persistent allocation, a
process on this machine, a job on a remote cluster. Each returns a complete followed job."""
