"""opx.publish: answers turned into what people read: charts, export formats, briefs, the files a link renders to.
May import everything in opx but the CLI."""
