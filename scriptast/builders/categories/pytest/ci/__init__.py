"""What TRT-LLM's CI runs for a stage, read from the repository as jenkins/L0_Test.groovy reads
it: the stage list, the conditions the stage name gives, the test-db and the waives file."""
