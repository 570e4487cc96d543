"""The fleet's web pages and HTML report (issue 27): Jinja2 templates with autoescaping, our CSS and JS."""
