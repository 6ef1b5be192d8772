"""The journey: stops (recorded and read), comments, statistics and the journey as a file."""
