"""The application's views: library, ask (with the page viewer), inspect, history."""
