"""The transports, by name: how run reaches a scheduler (this machine, or a cluster over one ssh
master) to run its commands and move files. Imports the contract and below; never a scheduler."""
